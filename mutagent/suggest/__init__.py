"""``mutagent suggest``: killing tests built from the suite's own tests, and run before they are shown.

For a survivor, the tests that reach its code (in the baseline, or under a fault in fault
exploration) are the raw material: their fixtures, their agent construction and their script,
read with libcst (``testsource``). Each candidate inserts the fault that reaches the mutated line
into that script. A probe (the test with each statement observed instead of asserted, ``build``
and ``probe``) runs on the original twice and on the mutant once; what differs between the two
(an exception raised or not, the number of requests, a tool result, a field of the next request,
the wait before a retry) becomes the candidate's assertions (``decide``). The candidate then runs
on the original several times, where it must pass every time, and on the mutant, where it must
fail (``session``). Only a candidate that did both is printed, written or stored.
"""

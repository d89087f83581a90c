"""The tool operators: shapes beyond their examples, silence on look-alike code, and -- the part
that matters -- that each mutant, executed, really lets through the failure its operator names
(the original executor refuses, reports or pairs correctly; the mutant does not)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import all_operators

TOOL_OPERATORS = (
    "truncate-tool-results",
    "mismatch-tool-call-id",
    "swallow-tool-error",
    "skip-tool-allowlist",
    "skip-argument-validation",
    "skip-approval",
    "ignore-idempotency-key",
    "skip-tenant-check",
)
ROOT = Path(__file__).resolve().parents[2]


def mutants(name: str, source: str, file: str = "agent.py") -> list:
    return generate_for_source(textwrap.dedent(source), file, [all_operators()[name]])


def changes(name: str, source: str) -> list[tuple[str, str]]:
    """(original, replacement) of every mutant, whitespace-normalised."""
    return [(" ".join(mu.original.split()), " ".join(mu.replacement.split())) for mu in mutants(name, source)]


def load(source: str) -> dict:
    namespace: dict = {"__name__": "mutant_under_test"}
    exec(compile(source, "<mutant>", "exec"), namespace)
    return namespace


def variants(name: str, source: str) -> list[dict]:
    """The namespace of every mutant of ``source`` (which must itself execute)."""
    source = textwrap.dedent(source)
    found = [load(mu.mutated_source(source)) for mu in mutants(name, source)]
    assert found, f"{name} found nothing to mutate"
    return found


# -- every example compiles, every operator is registered --------------------------------------


@pytest.mark.parametrize("name", TOOL_OPERATORS)
def test_every_mutant_of_every_example_compiles(name: str) -> None:
    operator = all_operators()[name]
    for example in operator.examples:
        for mu in generate_for_source(example.before, "example.py", [operator]):
            compile(mu.mutated_source(example.before), f"{name}-mutant", "exec")


# -- truncate-tool-results ----------------------------------------------------------------------


def test_truncate_follows_keys_assigned_after_the_dict_literal() -> None:
    source = """
    async def run_one(call, tools):
        response = {"type": "tool_result", "tool_use_id": call.id}
        try:
            response["content"] = str(await tools[call.name].execute(**call.input))
        except KeyError:
            response["content"] = "unknown tool"
            response["is_error"] = True
        return response
    """
    assert changes("truncate-tool-results", source) == [
        (
            "str(await tools[call.name].execute(**call.input))",
            "str(await tools[call.name].execute(**call.input))[:10]",
        )
    ]


def test_truncate_cuts_text_blocks_appended_to_a_declared_list_and_text_assigned_instead() -> None:
    source = """
    def to_result(result, tool_use_id):
        content: list[dict] = []
        if result.error:
            content = prefix(result.error)
        elif result.output:
            content.append({"type": "text", "text": result.output})
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    """
    assert sorted(changes("truncate-tool-results", source)) == [
        ("prefix(result.error)", "prefix(result.error)[:10]"),
        ("result.output", "result.output[:10]"),
    ]


def test_truncate_knows_positional_content_of_langchain_tool_message_and_mcp_blocks() -> None:
    source = """
    from langchain_core.messages import ToolMessage
    from mcp.types import CallToolResult, TextContent

    def lc(call, text):
        return ToolMessage(text, tool_call_id=call["id"])

    def mcp(blocks, text):
        CallToolResult(content=blocks)
        return CallToolResult(content=[TextContent(type="text", text=text)])
    """
    assert changes("truncate-tool-results", source) == [("text", "text[:10]"), ("text", "text[:10]")]


def test_truncate_leaves_constants_data_and_non_results_alone() -> None:
    source = """
    def results(call, output, history):
        history.append({"role": "user", "content": output})
        history.append({"role": "assistant", "content": output, "tool_calls": [call]})
        a = {"type": "tool_result", "tool_use_id": call.id, "content": PLACEHOLDER}
        b = {"type": "function_call_output", "call_id": call.id, "output": output.model_dump()}
        c = {"type": "tool_result", "tool_use_id": call.id, "content": [{"type": "image", "source": output}]}
        return a, b, c
    """
    assert mutants("truncate-tool-results", source) == []


# -- mismatch-tool-call-id ----------------------------------------------------------------------


def test_mismatch_finds_assistants_api_outputs_and_autogen_results() -> None:
    source = """
    from autogen_core import FunctionExecutionResult

    def submit(client, run, outputs):
        done = [{"tool_call_id": c.id, "output": o} for c, o in outputs]
        client.submit_tool_outputs(run.id, tool_outputs=done)
        return [FunctionExecutionResult(content=o, call_id=c.id, is_error=False) for c, o in outputs]
    """
    assert changes("mismatch-tool-call-id", source) == [("c.id", 'c.id + "x"'), ("c.id", 'c.id + "x"')]


def test_mismatch_ignores_test_modules() -> None:
    source = """
    def tool_result(*ids):
        return [{"type": "tool_result", "tool_use_id": i, "content": "out"} for i in ids]
    """
    assert mutants("mismatch-tool-call-id", source, file="tests/test_agent.py") == []
    assert mutants("mismatch-tool-call-id", source, file="agent/helpers.py") != []


def test_mismatched_id_no_longer_pairs_with_its_call() -> None:
    source = """
    def answer(calls, tools):
        return [{"type": "tool_result", "tool_use_id": c["id"], "content": tools[c["name"]]()} for c in calls]
    """
    calls = [{"id": "toolu_1", "name": "now"}]
    original = load(textwrap.dedent(source))["answer"](calls, {"now": lambda: "noon"})
    assert original[0]["tool_use_id"] == "toolu_1"
    for namespace in variants("mismatch-tool-call-id", source):
        assert namespace["answer"](calls, {"now": lambda: "noon"})[0]["tool_use_id"] != "toolu_1"


# -- swallow-tool-error -------------------------------------------------------------------------


def test_swallow_flips_langchain_status_and_flag_assignments() -> None:
    source = """
    from langchain_core.messages import ToolMessage

    def run(call, tools):
        try:
            return ToolMessage(content=str(tools[call["name"]](call["args"])), tool_call_id=call["id"])
        except Exception as exc:
            return ToolMessage(content=repr(exc), tool_call_id=call["id"], status="error")

    def flag(result):
        result.is_error = True
    """
    assert sorted(changes("swallow-tool-error", source)) == [('"error"', '"success"'), ("True", "False")]


def test_swallow_leaves_handlers_that_reraise_or_guard_the_model_call() -> None:
    source = """
    def run(call, tools, client):
        try:
            result = tools[call.name](**call.input)
        except Exception as exc:
            message = f"tool failed: {exc}"
            raise ToolError(message) from exc
        try:
            return client.messages.create(messages=[result])
        except Exception as exc:
            return f"Error: {exc}"
    """
    assert mutants("swallow-tool-error", source) == []


def test_swallowed_error_reaches_the_model_as_an_empty_success() -> None:
    source = """
    def run(call, functions):
        try:
            content = functions[call["name"]]()
        except Exception as exc:
            content = f"Error: {exc}"
        return {"role": "tool", "tool_call_id": call["id"], "content": content}
    """

    def broken():
        raise TimeoutError("inventory service timed out")

    call = {"id": "call_1", "name": "stock"}
    assert "timed out" in load(textwrap.dedent(source))["run"](call, {"stock": broken})["content"]
    for namespace in variants("swallow-tool-error", source):
        assert namespace["run"](call, {"stock": broken})["content"] == ""


# -- skip-tool-allowlist ------------------------------------------------------------------------


def test_allowlist_handles_deny_lists_and_predicates() -> None:
    source = """
    def gate_tool_call(block, policy):
        if block.name in DISABLED_TOOLS:
            raise ToolError("tool disabled")
        if not policy.is_allowed(block.name):
            raise ToolError("not allowed")
    """
    assert changes("skip-tool-allowlist", source) == [
        ("block.name in DISABLED_TOOLS", "False"),
        ("policy.is_allowed(block.name)", "True"),
    ]


def test_allowlist_knows_getattr_dispatch() -> None:
    source = """
    import tools

    def handle(tool_call):
        fn = getattr(tools, tool_call.function.name, None)
        if fn is None:
            return {"role": "tool", "tool_call_id": tool_call.id, "content": "Unknown tool"}
        return {"role": "tool", "tool_call_id": tool_call.id, "content": fn(tool_call.function.arguments)}
    """
    assert changes("skip-tool-allowlist", source) == [("fn is None", "False")]


def test_allowlist_ignores_registration_dispatch_and_other_registries() -> None:
    source = """
    class Toolset:
        def add_tool(self, tool):
            if tool.name in self.tools:
                raise UserError(f"Tool name conflicts with existing tool: {tool.name!r}")
            self.tools[tool.name] = tool

    def kind_of(part):
        if part.tool_name in ("bash_code_execution", "text_editor"):
            return part.tool_name
        return "other"

    def load_agents(agent_dict):
        for name in agent_dict["managed_agents"]:
            agent_cls = AGENT_REGISTRY.get(name)
            if agent_cls is None:
                raise ValueError(f"Unknown agent class {name}")
    """
    assert mutants("skip-tool-allowlist", source) == []


def test_a_comment_is_not_a_refusal() -> None:
    source = """
    def stream(self, block, skipped):
        if block.name not in self.enabled_tool_names:
            # the model cannot see a tool it was never offered, so this is rare
            skipped.add(block.id)
    """
    assert mutants("skip-tool-allowlist", source) == []


def test_bypassed_allowlist_runs_a_tool_the_model_was_never_offered() -> None:
    source = """
    def execute(name, args, registry, allowed):
        if name not in allowed:
            return {"error": f"unknown tool {name}"}
        return registry[name](**args)
    """
    ran = []
    registry = {"delete_all": lambda: ran.append("deleted") or "done"}
    assert load(textwrap.dedent(source))["execute"]("delete_all", {}, registry, {"search"}) == {
        "error": "unknown tool delete_all"
    }
    for namespace in variants("skip-tool-allowlist", source):
        assert namespace["execute"]("delete_all", {}, registry, {"search"}) == "done"
    assert ran == ["deleted"]


# -- skip-argument-validation -------------------------------------------------------------------


def test_argument_validation_knows_pydantic_v1_and_type_adapters() -> None:
    source = """
    from pydantic import TypeAdapter

    def parse(tool_call, Params):
        legacy = SearchArgs.parse_obj(tool_call.arguments)
        return legacy, TypeAdapter(Params).validate_python(tool_call.arguments)
    """
    assert changes("skip-argument-validation", source) == [
        ("SearchArgs.parse_obj(tool_call.arguments)", "SearchArgs.construct(**tool_call.arguments)"),
        ("TypeAdapter(Params).validate_python(tool_call.arguments)", "tool_call.arguments"),
    ]


def test_argument_validation_replaces_a_cleaning_validator_by_the_raw_arguments() -> None:
    source = """
    def run(tool, args):
        args = validate_args(tool.schema, args)
        return tool.fn(**args)
    """
    assert changes("skip-argument-validation", source) == [("validate_args(tool.schema, args)", "args")]


def test_argument_validation_ignores_dispatch_chains_signatures_and_token_checks() -> None:
    source = """
    import inspect

    def parse_input(input):
        if isinstance(input, list):
            return input
        elif isinstance(input, dict):
            return input["messages"]
        else:
            raise ValueError("no messages in input")

    def check_forward(self):
        for key in inspect.signature(self.forward).parameters:
            if key not in self.declared:
                raise ValueError(f"unexpected parameter {key}")

    def request(ctx, counted):
        ctx.usage_limits.check_per_request_input_tokens(counted)
    """
    assert mutants("skip-argument-validation", source) == []


def test_skipped_validation_lets_a_call_without_its_required_argument_run() -> None:
    source = """
    def call_tool(fn, schema, arguments):
        for key in schema["required"]:
            if key not in arguments:
                return f"missing required argument {key!r}"
        return fn(**arguments)
    """
    schema = {"required": ["city"]}

    def weather(city: str = "<none>") -> str:
        return f"sunny in {city}"

    assert (
        load(textwrap.dedent(source))["call_tool"](weather, schema, {}) == "missing required argument 'city'"
    )
    for namespace in variants("skip-argument-validation", source):
        assert namespace["call_tool"](weather, schema, {}) == "sunny in <none>"


# -- skip-approval ------------------------------------------------------------------------------


def test_approval_interrupts_and_rejections_are_both_gates() -> None:
    source = """
    async def run_shell(call, context, tool):
        approval_status = context.get_approval_status(tool.name, call.call_id)
        if approval_status is None:
            return approval_item
        if approval_status is False:
            return rejection(call, "the user rejected this call")
        return await tool.executor(call.command)
    """
    assert changes("skip-approval", source) == [
        ("approval_status is None", "False"),
        ("approval_status is False", "False"),
    ]


def test_approval_ignores_configuration_checks_and_non_answers() -> None:
    source = """
    class ShellTool:
        def __post_init__(self):
            if self.needs_approval is not False or self.on_approval is not None:
                raise UserError("hosted shell does not support needs_approval or on_approval")

    def identity(raw_item, tool_name):
        approval_scope_identity = scope(raw_item, tool_name)
        if approval_scope_identity is None:
            return None
        return approval_scope_identity
    """
    assert mutants("skip-approval", source) == []


def test_a_nested_approval_is_mutated_once() -> None:
    source = """
    def execute(self, call):
        tool = self.tools[call.name]
        if tool.requires_approval:
            if not self.ask_user(call):
                return {"error": "approval denied"}
        return tool.run(call.input)
    """
    # ``ask_user`` is no approval word: the requirement is the only gate seen, and it is bypassed
    assert changes("skip-approval", source) == [("tool.requires_approval", "False")]
    # a recognisable question inside: the requirement is left to it
    assert changes("skip-approval", source.replace("ask_user", "confirm")) == [("self.confirm(call)", "True")]


def test_skipped_approval_runs_the_side_effect_the_user_denied() -> None:
    source = """
    def execute(call, tools, approve):
        tool = tools[call["name"]]
        if tool["side_effect"] and not approve(call):
            return {"is_error": True, "content": "needs approval"}
        return {"content": tool["run"]()}
    """
    sent = []
    tools = {"send_mail": {"side_effect": True, "run": lambda: sent.append("mail") or "sent"}}
    call = {"name": "send_mail"}
    assert (
        load(textwrap.dedent(source))["execute"](call, tools, lambda c: False)["content"] == "needs approval"
    )
    for namespace in variants("skip-approval", source):
        assert namespace["execute"](call, tools, lambda c: False) == {"content": "sent"}


# -- ignore-idempotency-key ---------------------------------------------------------------------


def test_idempotency_finds_cache_reads_and_header_assignments() -> None:
    source = """
    def execute_tool(call, results, session):
        cached = results.get(call.idempotency_key)
        if cached is not None:
            return cached
        headers = {}
        headers["Idempotency-Key"] = call.idempotency_key
        return session.post("/tickets", headers=headers)
    """
    assert changes("ignore-idempotency-key", source) == [
        ("cached is not None", "False"),
        ('headers["Idempotency-Key"] = call.idempotency_key', "pass"),
    ]


def test_idempotency_ignores_fingerprints_outside_tool_code() -> None:
    source = """
    import hashlib
    import json

    def _fingerprint(payload):
        encoded = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(encoded).hexdigest()
    """
    assert mutants("ignore-idempotency-key", source) == []


def test_each_idempotency_mutant_runs_the_retry_again() -> None:
    source = textwrap.dedent(
        """
        import hashlib
        import json

        def idempotency_key(tool, args):
            return hashlib.sha256(json.dumps([tool, args], sort_keys=True).encode()).hexdigest()

        class Executor:
            def __init__(self, tools):
                self.tools, self.completed = tools, {}

            def run(self, name, args):
                key = idempotency_key(name, args)
                if key in self.completed:
                    return self.completed[key]
                result = self.completed[key] = self.tools[name](**args)
                return result
        """
    )

    def replay(namespace: dict) -> list[str]:
        created: list[str] = []
        executor = namespace["Executor"](
            {"create": lambda title, priority: created.append(title) or len(created)}
        )
        executor.run("create", {"title": "VPN down", "priority": 1})
        executor.run("create", {"priority": 1, "title": "VPN down"})  # the retry, keys in another order
        return created

    assert replay(load(source)) == ["VPN down"]
    found = variants("ignore-idempotency-key", source)
    assert len(found) == 2  # non-canonical key, lookup bypassed
    for namespace in found:
        assert replay(namespace) == ["VPN down", "VPN down"]


# -- skip-tenant-check --------------------------------------------------------------------------


def test_tenant_check_covers_memberships_predicates_and_raising_calls() -> None:
    source = """
    def read(args, principal, store):
        if args["org_id"] not in principal.orgs:
            raise PermissionError("not your organisation")
        if not is_allowed(principal.tenant_id, args["doc_id"]):
            return {"error": "forbidden"}
        ensure_same_tenant(principal, store.owner_of(args["doc_id"]))
        return store.read(args["doc_id"])
    """
    assert changes("skip-tenant-check", source) == [
        ('args["org_id"] not in principal.orgs', "False"),
        ('is_allowed(principal.tenant_id, args["doc_id"])', "True"),
        ('ensure_same_tenant(principal, store.owner_of(args["doc_id"]))', "pass"),
    ]


def test_skipped_tenant_check_reads_another_tenants_ticket() -> None:
    source = """
    def get_ticket(args, ctx, tickets):
        ticket = tickets[args["ticket_id"]]
        if ticket["tenant_id"] != ctx["tenant_id"]:
            raise PermissionError("ticket belongs to another tenant")
        return ticket["title"]
    """
    tickets = {"T-1": {"tenant_id": "globex", "title": "Globex payroll"}}
    with pytest.raises(PermissionError):
        load(textwrap.dedent(source))["get_ticket"]({"ticket_id": "T-1"}, {"tenant_id": "acme"}, tickets)
    for namespace in variants("skip-tenant-check", source):
        assert (
            namespace["get_ticket"]({"ticket_id": "T-1"}, {"tenant_id": "acme"}, tickets) == "Globex payroll"
        )


# -- the sample agent ---------------------------------------------------------------------------


SAMPLE = ROOT / "sample_agent"


@pytest.mark.skipif(not (SAMPLE / "tools.py").exists(), reason="the sample agent has no tool registry yet")
@pytest.mark.parametrize("name", TOOL_OPERATORS)
def test_each_operator_finds_its_concern_in_the_sample_agent_tools(name: str) -> None:
    source = (SAMPLE / "tools.py").read_text()
    assert mutants(name, source, file="sample_agent/tools.py"), (
        f"{name} finds nothing in sample_agent/tools.py"
    )


@pytest.mark.skipif(not SAMPLE.exists(), reason="no sample agent")
@pytest.mark.parametrize("module", ["loop.py", "journal.py", "retry.py", "client.py"])
def test_no_tool_operator_fires_on_the_sample_agents_other_modules(module: str) -> None:
    path = SAMPLE / module
    if not path.exists():
        pytest.skip(f"sample_agent/{module} does not exist")
    source = path.read_text()
    operators = [all_operators()[name] for name in TOOL_OPERATORS]
    found = generate_for_source(source, f"sample_agent/{module}", operators)
    assert not found, [(mu.operator, mu.location.start_line, mu.original) for mu in found]


def test_a_registry_lookup_next_to_a_real_allow_list_is_not_the_guard() -> None:
    """When a function checks an allow-list, the registry lookup beside it is not mutated: dropping
    it changes nothing while the allow-list (a subset of the registry) still refuses, so its mutant
    could never be killed. Alone, the registry lookup is the allow-list and is mutated."""
    with_list = """
    def dispatch(self, call):
        tool = self.tools.get(call.name)
        if tool is None or call.name not in self.allow:
            return "ERROR tool not allowed"
        return tool(**call.args)
    """
    assert changes("skip-tool-allowlist", with_list) == [("call.name not in self.allow", "False")]
    registry_only = """
    def dispatch(self, call):
        tool = self.tools.get(call.name)
        if tool is None:
            return "ERROR unknown tool"
        return tool(**call.args)
    """
    assert changes("skip-tool-allowlist", registry_only) == [("tool is None", "False")]


def test_a_refusal_is_known_by_its_error_flag_or_its_ownership_wording() -> None:
    """A branch that answers the model with an error result (``{"ok": False}``, ``is_error=True``)
    or says the resource is someone else's is a refusal, whatever other words it uses."""
    source = """
    def read_file(args, session):
        if args["workspace"] != session.workspace:
            return {"ok": False, "message": "that workspace is off limits"}
        return {"ok": True, "text": open(args["path"]).read()}

    def read_note(args, session):
        if args["customer_id"] != session.customer_id:
            return ToolResult(text="nope", is_error=True)
        return ToolResult(text=NOTES[args["note"]])
    """
    assert changes("skip-tenant-check", source) == [
        ('args["workspace"] != session.workspace', "False"),
        ('args["customer_id"] != session.customer_id', "False"),
    ]
    carries_on = """
    def read_file(args, session):
        if args["workspace"] != session.workspace:
            return {"ok": True, "note": "read across workspaces"}
        return {"ok": True}
    """
    assert changes("skip-tenant-check", carries_on) == []


# -- result objects, failure helpers, schema rules and truthful labels ---------------------------

CONTRACT = """
    TYPES = {"string": str, "integer": int}

    class ToolContract:
        def __init__(self, required, properties):
            self.required, self.properties = required, properties

        def problems(self, payload):
            found = []
            for key in self.required:
                if key not in payload:
                    found.append(f"missing required field {key!r}")
            for key, value in payload.items():
                if key not in self.properties:
                    found.append(f"unexpected field {key!r}")
                elif not isinstance(value, TYPES[self.properties[key]]):
                    found.append(f"field {key!r} should be {self.properties[key]}")
            return found

    def execute(contract, call):
        problems = contract.problems(call["arguments"])
        if problems:
            return {"role": "tool", "tool_call_id": call["id"], "content": "invalid: " + "; ".join(problems)}
        return {"role": "tool", "tool_call_id": call["id"], "content": "ran"}
"""


def test_each_schema_rule_of_a_contract_method_has_its_own_mutant() -> None:
    """The contract's method never names the arguments: the call site hands them over."""
    contract = {"required": ["city"], "properties": {"city": "string"}}
    bad_calls = {
        "missing": {"id": "c1", "arguments": {}},
        "unexpected": {"id": "c2", "arguments": {"city": "Paris", "debug": 1}},
        "type": {"id": "c3", "arguments": {"city": 3}},
    }
    original = load(textwrap.dedent(CONTRACT))
    for call in bad_calls.values():
        answer = original["execute"](original["ToolContract"](**contract), call)
        assert answer["content"] != "ran"
    let_through = {}
    for namespace in variants("skip-argument-validation", CONTRACT):
        runs = [
            kind
            for kind, call in bad_calls.items()
            if namespace["execute"](namespace["ToolContract"](**contract), call)["content"] == "ran"
        ]
        let_through[tuple(runs)] = let_through.get(tuple(runs), 0) + 1
    # one mutant per rule lets exactly its kind of bad call through; the caller's guard all of them
    assert let_through == {
        ("missing",): 1,
        ("unexpected",): 1,
        ("type",): 1,
        ("missing", "unexpected", "type"): 1,
    }


def test_swallowed_error_through_a_result_object_and_a_helper_reads_as_success() -> None:
    source = """
        class Outcome:
            def __init__(self, text, failed=False):
                self.text, self.failed = text, failed

        def boom(**kwargs):
            raise ValueError("disk full")

        def run_call(name, arguments, handlers):
            try:
                text = handlers[name](**arguments)
            except Exception as err:
                return Outcome(text=str(err), failed=True)
            return Outcome(text=text)

        def _fail(name, code, message):
            return {"tool": name, "ok": False, "error": {"code": code, "message": message}}

        def dispatch(name, args, registry):
            try:
                value = registry[name](**args)
            except Exception as exc:
                return _fail(name, "handler_error", str(exc))
            return {"tool": name, "ok": True, "value": value}
    """
    found = mutants("swallow-tool-error", textwrap.dedent(source))
    assert len(found) == 2
    assert "every failure it reports reads as success" in found[1].description
    outcomes = [load(mu.mutated_source(textwrap.dedent(source))) for mu in found]
    assert outcomes[0]["run_call"]("boom", {}, {"boom": outcomes[0]["boom"]}).failed is False
    assert outcomes[1]["dispatch"]("boom", {}, {"boom": outcomes[1]["boom"]})["ok"] is True


def test_allowlist_declines_a_check_whose_skipping_only_raises_key_error() -> None:
    source = """
        def dispatch(name, args, tools):
            if name not in tools:
                raise ValueError(f"unknown tool {name}")
            return tools[name](**args)
    """
    assert mutants("skip-tool-allowlist", source) == []


def test_idempotency_data_flow_survives_names_bound_to_each_other() -> None:
    # A module global swapped through a local (openai-agents' tracing/setup.py does this): following
    # ``provider`` to ``GLOBAL_PROVIDER`` and back used to recurse until RecursionError.
    source = textwrap.dedent(
        """
        GLOBAL_PROVIDER = None

        def get_provider(make):
            global GLOBAL_PROVIDER
            provider = GLOBAL_PROVIDER
            if provider is not None:
                return provider
            provider = make()
            GLOBAL_PROVIDER = provider
            return provider
        """
    )
    told: list[str] = []
    operator = [all_operators()["ignore-idempotency-key"]]
    assert generate_for_source(source, "agent.py", operator, warn=told.append) == []
    assert told == []  # no crash contained by generation either


def test_approval_gate_forces_only_its_decisive_leaf_and_leaves_recorders_alone() -> None:
    """A confirmed-call gate whose refusing side answers the call (``reject_tool_call``) gets one
    mutant, on ``is True``: forcing ``is not None`` beside it would let nothing through. An
    ``if`` that only writes the decision down on both sides, and a conditional word for an audit
    record, get none."""
    gate = """
    def resume_tool_calls(run, tools):
        for call in run.tool_calls:
            if call.confirmed is not None and call.confirmed is True and call.result is None:
                run_tool(tools[call.name], call)
            else:
                reject_tool_call(run, call)
            audit(run, call, "approved" if call.confirmed is True else "rejected")
    """
    assert changes("skip-approval", gate) == [("call.confirmed is True", "True")]
    recorder = """
    async def answer_tool_approval(context, request, callback):
        approved = (await callback(request))["approve"]
        if approved:
            context.approve_tool(request.item)
        else:
            context.reject_tool(request.item)
        return {"approval_request_id": request.id, "approve": approved}
    """
    assert changes("skip-approval", recorder) == []

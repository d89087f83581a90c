"""skip-tenant-check: a tool call may touch another tenant's data.

In a multi-tenant agent the model chooses identifiers (``ticket_id``, ``org_id``...), and a
prompt injection or a confused model will happily choose someone else's. The executor must
check that the resource the call touches belongs to the caller's tenant, whatever the model
says. A suite whose tests all act within one tenant can never notice the check is gone.

Recognised (``if``/``elif``/``assert``/conditional-expression guards, either polarity):

* comparisons of a tenant/organisation/workspace/owner identity with the caller's:
  ``args["tenant_id"] != ctx.tenant_id``, ``owner != self.tenant_id``, ``doc.org_id == user.org_id``,
  ``org not in principal.orgs`` -- the guard never refuses. An account, customer or user id the
  call names counts too when it is the whole key (``call.args.get("account") !=
  self.settings.tenant``, ``args["customer_id"] != session.customer_id``), not account data
  (``account_balance``, ``account_type``). A literal on either side (a plan check, ``tenant is
  None``) or a required-key check (``"tenant_id" not in args``) is not one;
* authorisation predicates: ``authorize(tenant, resource)``, ``self.auth.can_access(...)``,
  ``has_permission(...)``, ``belongs_to_tenant(...)`` -- forced true in a guard, and removed
  (``pass``) when called as a statement that raises on refusal (``ensure_same_tenant(...)``).

Filtering other tenants' rows out of a listing (``if row.tenant_id != tenant: continue``) is the
same check and is mutated too.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import agent_code
from mutagent.anatomy.syntax import final_name, final_name_or_key, is_constant, string_value
from mutagent.anatomy.tools.guards import bypass, guard_operands
from mutagent.anatomy.vocabulary import node_words
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

_TENANT = frozenset(
    (
        "tenant tenants org orgs organization organizations organisation organisations workspace workspaces "
        "owner owners owned"
    ).split()
)
#: Who else a resource may belong to. These words also name ordinary data (``account_balance``,
#: ``customer_name``), so they count only as the whole of a key or name, with at most an id
#: suffix: ``call.args.get("account")``, ``args["customer_id"]``, ``doc.workspace_id``, ``user_id``.
_OWNER_WORDS = frozenset(
    (
        "account accounts customer customers org orgs organization organizations organisation "
        "organisations workspace workspaces owner owners tenant tenants"
    ).split()
)
_ID_WORDS = frozenset("id ids uuid key".split())
_CALLER = frozenset("caller user current ctx context session principal request self actor".split())
_AUTHORISE = frozenset("authorize authorise authorized authorised authz owns permitted".split())
_ACCESS = frozenset("access permission permissions tenant owner ownership".split())
_ASKS = frozenset("can has check verify ensure require assert is same belongs allowed may".split())


def _between_names(
    operand: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.ComparisonTarget, cst.BaseExpression] | None:
    """(left, comparison, right) of a single comparison between two non-literals, else ``None``."""
    if not (isinstance(operand, cst.Comparison) and len(operand.comparisons) == 1):
        return None
    left, target = operand.left, operand.comparisons[0]
    right = target.comparator
    if is_constant(left) or is_constant(right):
        return None
    return left, target, right


def _is_tenant_comparison(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    parts = _between_names(operand)
    if parts is None:
        return False
    left, target, right = parts
    lw, rw = node_words(ctx, left), node_words(ctx, right)
    if isinstance(target.operator, (cst.In, cst.NotIn)):
        return bool(lw & _TENANT) and bool(rw & _TENANT)
    if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
        return bool((lw | rw) & _TENANT) and bool(lw & (_TENANT | _CALLER)) and bool(rw & (_TENANT | _CALLER))
    return False


def _identity(expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is, by its own name or key, whose a resource is: ``account``,
    ``args["customer_id"]``, ``call.args.get("account")``, ``self.org_id``, ``user_id`` -- not
    ``account_balance`` or ``user.name``."""
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get"
        and expr.args
    ):
        name = string_value(expr.args[0].value)
    else:
        name = final_name_or_key(expr)
    found = words(name or "")
    if not found or not found <= _OWNER_WORDS | _ID_WORDS | {"user", "users"}:
        return False
    return bool(found & _OWNER_WORDS) or (bool(found & {"user", "users"}) and bool(found & _ID_WORDS))


def _is_owner_comparison(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    """``call.args.get("account") != self.settings.tenant``, ``args["customer_id"] ==
    session.customer_id``, ``account not in principal.accounts``: an identity named by the call
    against the caller's own."""
    parts = _between_names(operand)
    if parts is None:
        return False
    left, target, right = parts
    if isinstance(target.operator, (cst.In, cst.NotIn)):
        return _identity(left) and _identity(right)
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
        return False

    def callers(side: cst.BaseExpression) -> bool:
        found = node_words(ctx, side)
        return _identity(side) or bool(found & (_OWNER_WORDS | {"user"}) and found & _CALLER)

    return (_identity(left) and callers(right)) or (_identity(right) and callers(left))


def _is_authorisation(ctx: SourceContext, call: cst.Call) -> bool:
    """``authorize(...)``, ``can_access(...)``, ``check_tenant(...)``, ``is_allowed(tenant, ...)``."""
    own = words(final_name(call) or "")
    if own & _AUTHORISE or (own & _ACCESS and own & _ASKS):
        return True
    return bool(own & {"allowed", "permitted"}) and any(node_words(ctx, a.value) & _TENANT for a in call.args)


class SkipTenantCheck(Operator):
    name = "skip-tenant-check"
    description = "The check that a tool call stays within the caller's tenant never refuses."
    failure = (
        "A tool call naming another tenant's resource is executed: data leaks across tenants, or one "
        "tenant's agent changes another tenant's records."
    )
    hint = (
        "Script a tool call whose arguments name a resource of another tenant and assert it was refused "
        "with an error result and nothing of the other tenant was read or changed."
    )
    examples = (
        Example(
            before=(
                "async def run_tool(self, name, args, session):\n"
                '    resource = args.get("resource")\n'
                "    if resource is not None and self.resource_tenants.get(resource) != session.tenant_id:\n"
                '        return f"resource {resource!r} is not in this tenant", True\n'
                "    return await self.tools[name](**args), False\n"
            ),
            after=(
                "async def run_tool(self, name, args, session):\n"
                '    resource = args.get("resource")\n'
                "    if resource is not None and False:\n"
                '        return f"resource {resource!r} is not in this tenant", True\n'
                "    return await self.tools[name](**args), False\n"
            ),
            note="the refusal is an (error text, is_error) pair, known by what it says",
        ),
        Example(
            before=(
                "def get_ticket(args, ctx):\n"
                '    if args["tenant_id"] != ctx.tenant_id:\n'
                '        raise ToolError("forbidden", "ticket belongs to another tenant")\n'
                '    return TICKETS[args["ticket_id"]]\n'
            ),
            after=(
                "def get_ticket(args, ctx):\n"
                "    if False:\n"
                '        raise ToolError("forbidden", "ticket belongs to another tenant")\n'
                '    return TICKETS[args["ticket_id"]]\n'
            ),
            note="the arguments' tenant against the caller's",
        ),
        Example(
            before=(
                "class Registry:\n"
                "    def execute(self, call):\n"
                "        owner = self.owner_of(call.input)\n"
                "        if owner is not None and owner != self.tenant_id:\n"
                '            return ToolResult(call.id, "refused: not your ticket", is_error=True)\n'
                "        return ToolResult(call.id, self.run(call))\n"
            ),
            after=(
                "class Registry:\n"
                "    def execute(self, call):\n"
                "        owner = self.owner_of(call.input)\n"
                "        if owner is not None and False:\n"
                '            return ToolResult(call.id, "refused: not your ticket", is_error=True)\n'
                "        return ToolResult(call.id, self.run(call))\n"
            ),
            note="the resource owner against the registry's tenant; the None check stays",
        ),
        Example(
            before=(
                "async def read_doc(tool_call, auth, docs):\n"
                '    doc = await docs.get(tool_call.arguments["doc_id"])\n'
                "    if not await auth.can_access(doc.workspace_id):\n"
                '        return {"role": "tool", "tool_call_id": tool_call.id, "content": "access denied"}\n'
                '    return {"role": "tool", "tool_call_id": tool_call.id, "content": doc.text}\n'
            ),
            after=(
                "async def read_doc(tool_call, auth, docs):\n"
                '    doc = await docs.get(tool_call.arguments["doc_id"])\n'
                "    if not True:\n"
                '        return {"role": "tool", "tool_call_id": tool_call.id, "content": "access denied"}\n'
                '    return {"role": "tool", "tool_call_id": tool_call.id, "content": doc.text}\n'
            ),
            note="OpenAI async runner asking an access predicate",
        ),
        Example(
            before=(
                "def handle(item, session):\n"
                "    args = json.loads(item.arguments)\n"
                '    authorize(session.tenant, args["account_id"])\n'
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "lookup(args)}\n"
            ),
            after=(
                "def handle(item, session):\n"
                "    args = json.loads(item.arguments)\n"
                "    pass\n"
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "lookup(args)}\n"
            ),
            note="Responses API runner; an authorisation call that raises",
        ),
        Example(
            before=(
                "def list_tickets(args, context):\n"
                "    found = []\n"
                "    for ticket in TICKETS.values():\n"
                "        if ticket.org_id != context.org_id:\n"
                "            continue\n"
                "        found.append(ticket)\n"
                "    return found\n"
            ),
            after=(
                "def list_tickets(args, context):\n"
                "    found = []\n"
                "    for ticket in TICKETS.values():\n"
                "        if False:\n"
                "            continue\n"
                "        found.append(ticket)\n"
                "    return found\n"
            ),
            note="other tenants' rows filtered out of a listing",
        ),
        Example(
            before=(
                "def price(tenant, args):\n"
                '    if tenant.plan == "free" and args["seats"] > 3:\n'
                '        raise ToolError("upgrade required")\n'
                "    if tenant.id is None:\n"
                "        tenant = default_tenant()\n"
                '    if "tenant_id" not in args:\n'
                '        raise ToolError("missing tenant_id")\n'
            ),
            note="a plan check, a missing tenant, a required key: none compares tenants",
        ),
        Example(
            before=(
                "def login(oauth, request):\n"
                "    url, state = oauth.authorization_url(AUTH_URL)\n"
                '    if request.args.get("state") != state:\n'
                '        raise ValueError("state mismatch")\n'
                "    return url\n"
            ),
            note="OAuth plumbing is not a tenant check",
        ),
        Example(
            before=(
                "class Assistant:\n"
                "    def _execute(self, call, tool):\n"
                '        if tool.tenant_scoped and call.args.get("account") != self.settings.tenant:\n'
                '            return "ERROR account belongs to another tenant"\n'
                "        return tool.func(**call.args)\n"
            ),
            after=(
                "class Assistant:\n"
                "    def _execute(self, call, tool):\n"
                "        if tool.tenant_scoped and False:\n"
                '            return "ERROR account belongs to another tenant"\n'
                "        return tool.func(**call.args)\n"
            ),
            note="the account the call names against the session's tenant",
        ),
        Example(
            before=(
                "def refund(args, session):\n"
                '    if args["customer_id"] != session.customer_id:\n'
                '        raise ToolError("not your order")\n'
                '    return issue_refund(args["order_id"])\n'
            ),
            after=(
                "def refund(args, session):\n"
                "    if False:\n"
                '        raise ToolError("not your order")\n'
                '    return issue_refund(args["order_id"])\n'
            ),
            note="the customer the call names against the session's customer",
        ),
        Example(
            before=(
                "def withdraw(args, account_balance, session):\n"
                "    if account_balance < 0:\n"
                '        raise ToolError("overdrawn")\n'
                '    if args["account_type"] != session.default_type:\n'
                '        raise ToolError("wrong account type")\n'
                '    if args["user_id"] is None:\n'
                '        raise ToolError("missing user_id")\n'
            ),
            note="account data that is not whose the account is; a missing id is not a comparison",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for operand in guard_operands(ctx):
            call = operand.expression if isinstance(operand, cst.Await) else operand
            if _is_tenant_comparison(ctx, operand) or _is_owner_comparison(ctx, operand):
                # ``tenant == caller`` passes when true; ``tenant != caller`` when false
                passing = isinstance(operand.comparisons[0].operator, (cst.Equal, cst.Is, cst.In))
            elif isinstance(call, cst.Call) and _is_authorisation(ctx, call):
                passing = True
            else:
                continue
            allowed = bypass(ctx, operand)
            if allowed is not None and allowed.value == str(passing):
                yield Mutation(operand, allowed, f"tenant check `{ctx.code(operand)}` never refuses")
        for statement in agent_code(ctx, m.Expr(value=m.Call() | m.Await(expression=m.Call()))):
            call = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
            if _is_authorisation(ctx, call):
                yield Mutation(statement, cst.Pass(), f"authorisation `{ctx.code(call)}` removed")

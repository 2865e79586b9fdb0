#!/usr/bin/env python3
"""check_actions.py - a schema check of GitHub Actions files (Debian
packages no actionlint): a workflow (.github/workflows/*.yml) and a
composite action (action.yml), plus the consistency of their install
steps with .ci/run (docs/ci-gate.md).

  check_actions.py [--workflow FILE]... [--action FILE]... [--ci-run FILE]
                   [--bootstrap FILE]

Checks, each failure one line "FILE: where: problem" on stderr, exit 1:
  - the YAML parses (no duplicate keys), top-level keys are known, the
    required ones are there;
  - workflow: `on` names known events with known filters; every job has
    runs-on (or uses a reusable workflow), known keys, steps;
  - every step: known keys, exactly one of uses/run, `uses` is
    owner/repo[/path]@ref, ./path or docker://image; composite action run
    steps have `shell`;
  - every ${{ }} is closed, and names only known contexts and functions;
    `inputs.X` is declared (action inputs, workflow_dispatch /
    workflow_call inputs); `steps.X` is a step id defined earlier in the
    same job; `secrets`/`matrix`/`needs` only where they exist;
  - each run step that runs `apt-get install` has an `apt-get update`
    before it (same step or an earlier one), and every package .ci/run
    installs is installed by every workflow and action given, but for its
    test-only packages (TEST_ONLY_PKGS="..." in .ci/run: the workflow and
    the action run the gate, not the suite); bootstrap's PKGS are a subset
    of .ci/run's.
Exit 0 when every check holds, 1 otherwise, 2 usage.
"""
import re
import sys

try:
    import yaml
except ImportError:
    sys.stderr.write("check_actions.py: python3-yaml is missing\n")
    sys.exit(1)

ERRORS = []


def err(f, where, msg):
    ERRORS.append("%s: %s: %s" % (f, where, msg))


class UniqueLoader(yaml.SafeLoader):
    """SafeLoader refusing duplicate mapping keys (GitHub refuses them)."""


def _mapping(loader, node, deep=False):
    seen = set()
    for k, _ in node.value:
        key = loader.construct_object(k, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, "duplicate key %r" % (key,), k.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


UniqueLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)

WORKFLOW_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults",
                 "concurrency", "jobs"}
EVENTS = {
    "pull_request": {"types", "branches", "branches-ignore", "paths",
                     "paths-ignore"},
    "pull_request_target": {"types", "branches", "branches-ignore", "paths",
                            "paths-ignore"},
    "push": {"branches", "branches-ignore", "tags", "tags-ignore", "paths",
             "paths-ignore"},
    "workflow_dispatch": {"inputs"},
    "workflow_call": {"inputs", "outputs", "secrets"},
    "schedule": None, "merge_group": {"types"}, "release": {"types"},
    "issues": {"types"}, "issue_comment": {"types"}, "workflow_run":
    {"workflows", "types", "branches", "branches-ignore"},
    "create": set(), "delete": set(), "fork": set(), "watch": {"types"},
}
JOB_KEYS = {"name", "needs", "permissions", "runs-on", "environment",
            "concurrency", "outputs", "env", "defaults", "if", "steps",
            "timeout-minutes", "strategy", "continue-on-error", "container",
            "services", "uses", "with", "secrets"}
CONTAINER_KEYS = {"image", "credentials", "env", "ports", "volumes",
                  "options"}
STEP_KEYS = {"id", "if", "name", "uses", "run", "shell", "with", "env",
             "continue-on-error", "timeout-minutes", "working-directory"}
COMPOSITE_STEP_KEYS = STEP_KEYS - {"timeout-minutes"}
ACTION_KEYS = {"name", "author", "description", "inputs", "outputs", "runs",
               "branding"}
INPUT_KEYS = {"description", "required", "default", "deprecationMessage"}
WF_INPUT_KEYS = {"description", "required", "default", "type", "options"}
CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner",
            "secrets", "strategy", "matrix", "needs", "inputs"}
FUNCTIONS = {"contains", "startsWith", "endsWith", "format", "join",
             "toJSON", "fromJSON", "hashFiles", "success", "always",
             "cancelled", "failure"}
LITERALS = {"true", "false", "null"}
USES_RE = re.compile(r"^(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?"
                     r"@[A-Za-z0-9_.\-/]+|\./[^\s]*|docker://\S+)$")
ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def strings(node, path):
    """Every string in node with its path (keys included)."""
    if isinstance(node, dict):
        for k, v in node.items():
            p = "%s.%s" % (path, k)
            if isinstance(k, str):
                yield p, k
            yield from strings(v, p)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from strings(v, "%s[%d]" % (path, i))
    elif isinstance(node, str):
        yield path, node


def expressions(f, where, s):
    """The bodies of ${{ }} in s; an unclosed one is an error."""
    out, i = [], 0
    while True:
        j = s.find("${{", i)
        if j < 0:
            break
        k = s.find("}}", j + 3)
        if k < 0:
            err(f, where, "unclosed ${{ expression")
            break
        body = s[j + 3:k]
        if "${{" in body:
            err(f, where, "nested ${{ in an expression")
        out.append(body)
        i = k + 2
    if s.count("}}") > s.count("${{") and "${{" in s:
        err(f, where, "unbalanced }} in an expression")
    return out


def check_expr(f, where, body, ctx):
    """Names in one expression: contexts, functions, literals; inputs and
    step ids declared."""
    if body.strip() == "":
        err(f, where, "empty ${{ }} expression")
        return
    if body.count("(") != body.count(")") or \
            body.count("[") != body.count("]"):
        err(f, where, "unbalanced brackets in ${{%s}}" % body)
    text = re.sub(r"'(?:[^']|'')*'", "''", body)
    if "'" in text.replace("''", ""):
        err(f, where, "unclosed string in ${{%s}}" % body)
        return
    for m in re.finditer(r"(?<![.\w-])([A-Za-z_][A-Za-z0-9_-]*)"
                         r"((?:\.[A-Za-z0-9_*-]+)*)", text):
        name, rest = m.group(1), m.group(2)
        after = text[m.end():].lstrip()
        if re.match(r"^\d", name):
            continue
        if after.startswith("(") and not rest:
            if name not in FUNCTIONS:
                err(f, where, "unknown function %s()" % name)
            continue
        if name in LITERALS:
            continue
        if name not in CONTEXTS:
            err(f, where, "unknown context '%s' in ${{%s}}" % (name, body))
            continue
        if name not in ctx["allowed"]:
            err(f, where, "context '%s' is not available here" % name)
        parts = rest.split(".")[1:]
        if name == "inputs":
            if not parts:
                continue
            if parts[0] not in ctx["inputs"]:
                err(f, where, "inputs.%s is not declared" % parts[0])
        if name == "steps" and parts and parts[0] not in ctx["steps"]:
            err(f, where, "steps.%s: no earlier step has that id" % parts[0])


def check_strings(f, where, node, ctx):
    for p, s in strings(node, where):
        for body in expressions(f, p, s):
            check_expr(f, p, body, ctx)


def check_steps(f, where, steps, ctx, composite):
    if not isinstance(steps, list) or not steps:
        err(f, where, "steps must be a non-empty list")
        return
    keys = COMPOSITE_STEP_KEYS if composite else STEP_KEYS
    ids = set()
    for i, st in enumerate(steps):
        w = "%s[%d]" % (where, i)
        if not isinstance(st, dict):
            err(f, w, "a step must be a mapping")
            continue
        for k in st:
            if k not in keys:
                err(f, w, "unknown step key '%s'" % k)
        if ("uses" in st) == ("run" in st):
            err(f, w, "a step needs exactly one of uses and run")
        if "uses" in st:
            if not isinstance(st["uses"], str) or \
                    not USES_RE.match(st["uses"]):
                err(f, w, "uses '%s' is not owner/repo@ref, ./path or "
                    "docker://image" % st.get("uses"))
            if "shell" in st:
                err(f, w, "shell on a uses step")
        if "run" in st:
            if not isinstance(st["run"], str):
                err(f, w, "run must be a string")
            if composite and "shell" not in st:
                err(f, w, "a composite action's run step needs shell")
            if "with" in st:
                err(f, w, "with on a run step")
        if "id" in st:
            if not isinstance(st["id"], str) or not ID_RE.match(st["id"]):
                err(f, w, "bad step id %r" % st["id"])
            elif st["id"] in ids:
                err(f, w, "duplicate step id '%s'" % st["id"])
        sctx = dict(ctx, steps=set(ids))
        check_strings(f, w, st, sctx)
        if isinstance(st.get("id"), str):
            ids.add(st["id"])


def declared_inputs(on):
    out = set()
    if isinstance(on, dict):
        for ev in ("workflow_dispatch", "workflow_call"):
            spec = on.get(ev)
            if isinstance(spec, dict) and isinstance(spec.get("inputs"),
                                                     dict):
                out |= set(spec["inputs"])
    return out


def check_workflow(f, doc):
    if not isinstance(doc, dict):
        err(f, "top", "a workflow must be a mapping")
        return
    if True in doc and "on" not in doc:   # YAML 1.1 reads `on` as true
        doc["on"] = doc.pop(True)
    for k in doc:
        if k not in WORKFLOW_KEYS:
            err(f, "top", "unknown key '%s'" % k)
    for k in ("on", "jobs"):
        if k not in doc:
            err(f, "top", "missing '%s'" % k)
    on = doc.get("on")
    events = []
    if isinstance(on, str):
        events = [on]
    elif isinstance(on, list):
        events = on
    elif isinstance(on, dict):
        events = list(on)
    elif on is not None:
        err(f, "on", "must be an event, a list or a mapping")
    for ev in events:
        if ev not in EVENTS:
            err(f, "on", "unknown event '%s'" % ev)
            continue
        spec = on.get(ev) if isinstance(on, dict) else None
        allowed = EVENTS[ev]
        if isinstance(spec, dict) and allowed is not None:
            for k in spec:
                if k not in allowed:
                    err(f, "on.%s" % ev, "unknown filter '%s'" % k)
            if ev in ("workflow_dispatch", "workflow_call") and \
                    isinstance(spec.get("inputs"), dict):
                for n, d in spec["inputs"].items():
                    for k in (d or {}):
                        if k not in WF_INPUT_KEYS:
                            err(f, "on.%s.inputs.%s" % (ev, n),
                                "unknown key '%s'" % k)
        elif ev == "schedule" and not isinstance(spec, list):
            err(f, "on.schedule", "must be a list of {cron: ...}")
        elif spec is not None and not isinstance(spec, dict) and \
                ev != "schedule":
            err(f, "on.%s" % ev, "must be a mapping or empty")
    inputs = declared_inputs(on)
    base_ctx = {"inputs": inputs,
                "allowed": CONTEXTS - ({"inputs"} if not inputs else set()),
                "steps": set()}
    for k in ("name", "run-name", "env", "concurrency", "permissions"):
        if k in doc:
            check_strings(f, k, doc[k], dict(base_ctx, allowed=base_ctx[
                "allowed"] - {"steps", "job", "runner", "matrix", "needs",
                              "strategy", "secrets"}))
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        err(f, "jobs", "must be a non-empty mapping")
        return
    for jid, job in jobs.items():
        w = "jobs.%s" % jid
        if not isinstance(jid, str) or not ID_RE.match(jid):
            err(f, w, "bad job id")
        if not isinstance(job, dict):
            err(f, w, "a job must be a mapping")
            continue
        for k in job:
            if k not in JOB_KEYS:
                err(f, w, "unknown job key '%s'" % k)
        if "uses" in job:
            if "steps" in job:
                err(f, w, "a reusable-workflow job has no steps")
            continue
        if "runs-on" not in job:
            err(f, w, "missing runs-on")
        elif not isinstance(job["runs-on"], (str, list, dict)):
            err(f, w, "runs-on must be a label, a list or a group")
        c = job.get("container")
        if isinstance(c, dict):
            for k in c:
                if k not in CONTAINER_KEYS:
                    err(f, w + ".container", "unknown key '%s'" % k)
            if "image" not in c:
                err(f, w + ".container", "missing image")
        elif c is not None and not isinstance(c, str):
            err(f, w + ".container", "must be an image or a mapping")
        allowed = set(base_ctx["allowed"])
        if "strategy" not in job:
            allowed -= {"matrix"}
        if "needs" not in job:
            allowed -= {"needs"}
        ctx = dict(base_ctx, allowed=allowed)
        for k, v in job.items():
            if k != "steps":
                check_strings(f, "%s.%s" % (w, k), v, ctx)
        check_steps(f, w + ".steps", job.get("steps"), ctx, False)


def check_action(f, doc):
    if not isinstance(doc, dict):
        err(f, "top", "an action must be a mapping")
        return
    for k in doc:
        if k not in ACTION_KEYS:
            err(f, "top", "unknown key '%s'" % k)
    for k in ("name", "description", "runs"):
        if k not in doc:
            err(f, "top", "missing '%s'" % k)
    inputs = doc.get("inputs") or {}
    if not isinstance(inputs, dict):
        err(f, "inputs", "must be a mapping")
        inputs = {}
    for n, d in inputs.items():
        if not isinstance(n, str) or not ID_RE.match(n):
            err(f, "inputs", "bad input id %r" % n)
        if not isinstance(d, dict) or "description" not in d:
            err(f, "inputs.%s" % n, "needs a description")
            continue
        for k in d:
            if k not in INPUT_KEYS:
                err(f, "inputs.%s" % n, "unknown key '%s'" % k)
    ctx = {"inputs": set(inputs), "steps": set(),
           "allowed": {"github", "env", "inputs", "steps", "runner", "job",
                       "strategy", "matrix", "vars"}}
    for n, d in inputs.items():
        if isinstance(d, dict):   # defaults: github and the like only
            check_strings(f, "inputs.%s" % n, d.get("default"),
                          dict(ctx, allowed={"github", "runner", "env",
                                             "vars"}))
    runs = doc.get("runs")
    if not isinstance(runs, dict):
        err(f, "runs", "must be a mapping")
        return
    if runs.get("using") != "composite":
        err(f, "runs.using", "this check knows composite actions only")
    for k in runs:
        if k not in ("using", "steps"):
            err(f, "runs", "unknown key '%s' for a composite action" % k)
    steps = runs.get("steps")
    check_steps(f, "runs.steps", steps, ctx, True)
    ids = {s.get("id") for s in steps or [] if isinstance(s, dict)}
    outputs = doc.get("outputs") or {}
    for n, d in (outputs.items() if isinstance(outputs, dict) else []):
        if not isinstance(d, dict) or "value" not in d:
            err(f, "outputs.%s" % n, "a composite action's output needs "
                "value")
            continue
        for k in d:
            if k not in ("description", "value"):
                err(f, "outputs.%s" % n, "unknown key '%s'" % k)
        check_strings(f, "outputs.%s" % n, d, dict(ctx, steps=ids))


# ---- the install steps ------------------------------------------------------

def shell_commands(text):
    """The commands of a shell text: continuations joined, split at
    ; && || | and newlines (good enough for install lines)."""
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.split("\n"):
        line = line.split("#", 1)[0] if line.lstrip().startswith("#") \
            else line
        for part in re.split(r"&&|\|\||;|\|", line):
            if part.strip():
                out.append(part.split())
    return out


def apt_words(cmd):
    """('update'|'install', [packages]) for an apt-get command, else None."""
    words = [w for w in cmd if w not in ("sudo", "-E", "env")]
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    if not words or words[0] not in ("apt-get", "apt"):
        return None
    rest = [w for w in words[1:] if not w.startswith("-")]
    if not rest:
        return None
    if rest[0] == "update":
        return ("update", [])
    if rest[0] == "install":
        return ("install", [w for w in rest[1:] if not w.startswith("$")
                            and w not in ("exit", "2", "{", "}")])
    return None


def install_packages(f, steps_text):
    """The packages installed by a list of (where, run text), checking that
    apt-get update precedes each install."""
    pkgs, updated, seen_install = set(), False, False
    for where, text in steps_text:
        for cmd in shell_commands(text):
            a = apt_words(cmd)
            if a is None:
                continue
            if a[0] == "update":
                updated = True
            else:
                seen_install = True
                if not updated:
                    err(f, where, "apt-get install before apt-get update")
                pkgs |= set(a[1])
    return pkgs, seen_install


def run_texts(doc, action):
    if action:
        steps = (doc.get("runs") or {}).get("steps") or []
        return [("runs.steps[%d]" % i, s["run"]) for i, s in
                enumerate(steps) if isinstance(s, dict) and
                isinstance(s.get("run"), str)]
    out = []
    for jid, job in (doc.get("jobs") or {}).items():
        for i, s in enumerate((job or {}).get("steps") or []):
            if isinstance(s, dict) and isinstance(s.get("run"), str):
                out.append(("jobs.%s.steps[%d]" % (jid, i), s["run"]))
    return out


def ci_run_test_only(text):
    """The packages of .ci/run's TEST_ONLY_PKGS="..." (empty set when
    it has none)."""
    m = re.search(r'^TEST_ONLY_PKGS="([^"$`\\]*)"$', text, re.M)
    return set(m.group(1).split()) if m else set()


def ci_run_packages(path):
    """(every package .ci/run installs, its test-only ones)."""
    with open(path) as fh:
        text = fh.read()
    test_only = ci_run_test_only(text)
    text = text.replace("$TEST_ONLY_PKGS", " ".join(sorted(test_only)))
    pkgs, _ = install_packages(path, [("script", text)])
    if not pkgs:
        err(path, "script", "no apt-get install found")
    return pkgs, test_only & pkgs


def bootstrap_packages(path):
    with open(path) as fh:
        text = fh.read()
    m = re.search(r'^PKGS="([^"]*)"', text, re.M)
    if not m:
        err(path, "PKGS", "no PKGS=\"...\" list found")
        return set()
    return set(m.group(1).split())


def main(argv):
    workflows, actions, ci_run, boot = [], [], None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--workflow", "--action", "--ci-run", "--bootstrap") and \
                i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--workflow":
                workflows.append(v)
            elif a == "--action":
                actions.append(v)
            elif a == "--ci-run":
                ci_run = v
            else:
                boot = v
            i += 2
        else:
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
    if not workflows and not actions:
        sys.stderr.write("check_actions.py: nothing to check\n")
        return 2
    want, test_only = ci_run_packages(ci_run) if ci_run else (set(), set())
    if boot:
        missing = bootstrap_packages(boot) - want
        if ci_run and missing:
            err(boot, "PKGS", "not installed by %s: %s" %
                (ci_run, " ".join(sorted(missing))))
    for path, action in [(w, False) for w in workflows] + \
            [(a, True) for a in actions]:
        try:
            with open(path) as fh:
                doc = yaml.load(fh, Loader=UniqueLoader)
        except (OSError, yaml.YAMLError) as e:
            err(path, "yaml", str(e).replace("\n", " "))
            continue
        (check_action if action else check_workflow)(path, doc)
        if not isinstance(doc, dict):
            continue
        pkgs, any_install = install_packages(path, run_texts(doc, action))
        if ci_run:
            if not any_install:
                err(path, "install", "no apt-get install step")
            missing = want - test_only - pkgs
            if missing:
                err(path, "install", "does not install what %s installs: %s"
                    % (ci_run, " ".join(sorted(missing))))
    for e in ERRORS:
        sys.stderr.write(e + "\n")
    if ERRORS:
        return 1
    print("ok: %s" % ", ".join(workflows + actions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The house rules, checked on every source file.

1. Nothing under algorithms/ or sim/shim/ includes a SimGrid or MPI header:
   those live in the backends' rooms (sim/backends/NAME).  Algorithms see the
   shim's two headers (sim/shim/shim.h, and sim/shim/workload.h for the
   workload questions) and their own headers, nothing else.
2. Rooms depend downward only: each folder includes files of the folders it
   may use (the table below, which docs/architecture.md states in words),
   and that table has no cycle.
3. Project headers are named from the repository root ("sim/driver/plan.h",
   one include directory in CMake) or, in the same folder, by their bare
   name; never by a "../" path.
4. No function in a .c, .cpp or .cu file of a room or of bench/ is longer
   than MAX_FUNCTION_LINES lines, counted from the first line of its
   signature to its closing brace, except the functions named in
   LONG_FUNCTIONS with the reason for each.  The project's style is what the
   count reads: a function body opens with "{" alone at column 0 and closes
   with the first "}" at column 0 after it (K&R inside); its signature
   starts on the last line above the "{" that starts at column 0 (its
   continuation lines are indented).

usage: test_layout.py REPO_ROOT        (exit 0: the rules hold)
       test_layout.py --self-test      (the checker catches what it must)
"""
import os
import re
import sys
import tempfile

# folder -> the folders its files may include (besides their own)
MAY_USE = {
    "traces": set(),
    "topologies": {"traces"},
    "analysis": {"traces", "algorithms"},
    "sim/shim": {"traces", "topologies"},
    "sim/backends/simgrid": {"sim/shim", "traces", "topologies"},
    "sim/backends/mpi": {"sim/shim", "traces", "topologies"},
    "algorithms": {"sim/shim"},
    "sim/workload": {"algorithms", "sim/shim", "traces", "analysis"},
    "sim/driver": {"sim/shim", "sim/workload", "algorithms", "analysis", "traces", "topologies"},
    "sim/commands": {"sim/driver", "sim/shim", "sim/workload", "algorithms", "analysis", "traces", "topologies"},
}
# what a file in algorithms/ may include from sim/shim
ALGORITHMS_SEE = {"sim/shim/shim.h", "sim/shim/workload.h"}
# the rooms that include no SimGrid or MPI header
NO_BACKEND_HEADERS = {"algorithms", "sim/shim"}
BACKEND_HEADER = re.compile(r"^\s*#\s*include\s*[<\"](simgrid/|simgrid\.h|mpi\.h|smpi/|xbt/)")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".c", ".h", ".cpp", ".cu", ".cuh")

MAX_FUNCTION_LINES = 150
# folders outside the rooms whose functions are held to the same length
LENGTH_ALSO = {"bench"}
FUNCTION_SOURCES = (".c", ".cpp", ".cu")
# (file, function) -> why it may be longer
LONG_FUNCTIONS = {
    ("bench/gpu_bench.cu", "main"): "a benchmark program: one measurement after the other, read top to bottom",
}
FUNCTION_NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9:~]*)\s*\(")


def room_of(rel):
    """The room of a path relative to the root: the longest MAY_USE key it lies in."""
    best = None
    for room in MAY_USE:
        if rel == room or rel.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def functions(text):
    """(name, first line, length in lines) of each function defined in text,
    in the project's style: the body opens with "{" alone at column 0 below
    its signature and closes with the next "}" at column 0."""
    lines = text.split("\n")
    found = []
    i = 1
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        start = i - 1  # the signature: the line above and its indented continuations
        while start > 0 and lines[start][:1] in (" ", "\t") and lines[start].strip():
            start -= 1
        signature = " ".join(line.strip() for line in lines[start:i])
        m = FUNCTION_NAME.search(signature)
        if not m or "=" in signature[:m.start()]:
            i += 1  # an initializer, not a function
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        found.append((m.group(1), start + 1, end - start + 1))
        i = end + 1
    return found


def long_functions(root, longest=None):
    """The violations of rule 4 under root; longest gets (lines, file,
    line, name) of every function counted."""
    problems = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        for name in filenames:
            if not name.endswith(FUNCTION_SOURCES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if room_of(rel) is None and rel.split(os.sep)[0] not in LENGTH_ALSO:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for fname, line, length in functions(text):
                if longest is not None:
                    longest.append((length, rel, line, fname))
                if length > MAX_FUNCTION_LINES and (rel, fname) not in LONG_FUNCTIONS:
                    problems.append("%s:%d: %s is %d lines, more than %d; split it into named steps "
                                    "(or name it in LONG_FUNCTIONS with the reason)"
                                    % (rel, line, fname, length, MAX_FUNCTION_LINES))
    return problems


def acyclic(graph):
    state = {}

    def visit(n, stack):
        if state.get(n) == 1:
            raise ValueError("cycle: " + " -> ".join(stack + [n]))
        if state.get(n) == 2:
            return
        state[n] = 1
        for m in graph.get(n, ()):
            visit(m, stack + [n])
        state[n] = 2

    for n in graph:
        visit(n, [])


def check(root, counted=None, longest=None):
    """The list of violations under root (empty when the rules hold);
    counted[0] gets the number of files checked, longest the functions
    counted for rule 4."""
    problems = []
    files = 0
    try:
        acyclic(MAY_USE)
    except ValueError as e:
        problems.append("the table of rooms has a " + str(e))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        for name in filenames:
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            room = room_of(rel)
            if room is None:
                continue  # tests, bench, notebooks: they may use anything
            files += 1
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    if room in NO_BACKEND_HEADERS and BACKEND_HEADER.match(line):
                        problems.append("%s:%d: %s includes no SimGrid or MPI header (a backend's room does): %s"
                                        % (rel, lineno, room, line.strip()))
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    name = m.group(1)
                    if name.startswith("../") or "/../" in name:
                        problems.append("%s:%d: names a header by a ../ path; name it from the root: %s"
                                        % (rel, lineno, line.strip()))
                        continue
                    # a bare name is in the file's own folder; a path is from the root
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), name) if "/" not in name else name)
                    other = room_of(target)
                    if other is None or other == room:
                        if other is None and not os.path.exists(os.path.join(root, target)):
                            problems.append("%s:%d: includes %s, which is not there" % (rel, lineno, target))
                        continue
                    if other not in MAY_USE[room]:
                        problems.append("%s:%d: %s may not use %s (includes %s)" % (rel, lineno, room, other, target))
                    elif room == "algorithms" and target not in ALGORITHMS_SEE:
                        problems.append("%s:%d: algorithms see only %s, not %s"
                                        % (rel, lineno, " ".join(sorted(ALGORITHMS_SEE)), target))
    problems += long_functions(root, longest)
    if counted is not None:
        counted[0] = files
    return problems


def function_text(name, lines, signature_lines=1):
    """A function in the project's style, `lines` long from its signature to
    its closing brace, with K&R blocks inside."""
    if signature_lines == 1:
        head = ["static int %s(int a)" % name]
    else:
        head = (["static int %s(int a," % name] + ["        int b%d," % j for j in range(signature_lines - 2)]
                + ["        int z)"])
    body = ["    if (a) {", "        a++;", "    }"]
    filler = lines - len(head) - len(body) - 3
    return "\n".join(["/* a comment */", "#include <stdlib.h>", ""] + head + ["{"] + body
                     + ["    a += 1;"] * filler + ["    return a;", "}", ""])


def self_test():
    """A tree that breaks each rule must be caught; a clean one must pass.
    Returns the failures and the number of checks."""
    cases = {
        "mpi in algorithms": ("algorithms/a.c", "#include <mpi.h>\n"),
        "simgrid in algorithms": ("algorithms/a.c", "#include <simgrid/actor.h>\n"),
        "algorithms use the driver": ("algorithms/a.c", '#include "sim/driver/run.h"\n'),
        "algorithms use the backend": ("algorithms/a.c", '#include "sim/shim/backend.h"\n'),
        "traces use the driver": ("traces/t.c", '#include "sim/driver/plan.h"\n'),
        "the shim uses the driver": ("sim/shim/s.c", '#include "sim/driver/run.h"\n'),
        "simgrid in the shim": ("sim/shim/s.c", "#include <simgrid/engine.h>\n"),
        "mpi in the shim": ("sim/shim/s.c", "#include <mpi.h>\n"),
        "a backend uses the driver": ("sim/backends/mpi/m.c", '#include "sim/driver/run.h"\n'),
        "one backend uses the other": ("sim/backends/mpi/m.c", '#include "sim/backends/simgrid/engine.h"\n'),
        "algorithms use a backend": ("algorithms/a.c", '#include "sim/backends/simgrid/engine.h"\n'),
        "topologies use algorithms": ("topologies/p.c", '#include "algorithms/algorithm.h"\n'),
        "a ../ include": ("sim/driver/d.c", '#include "../shim/backend.h"\n'),
        "a long function": ("sim/driver/d.c", function_text("f", MAX_FUNCTION_LINES + 1)),
        "a long function with a long signature": ("algorithms/a.c", function_text("f", MAX_FUNCTION_LINES + 1, 3)),
        "a long function in bench": ("bench/b.cu", function_text("main", MAX_FUNCTION_LINES + 1)),
        "a long function after an initializer": ("traces/t.c", "static const int T[] =\n{\n    1,\n};\n"
                                                 + function_text("g", MAX_FUNCTION_LINES + 1)),
    }
    failures = 0
    for what, (rel, text) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for f in ["sim/driver/run.h", "sim/driver/plan.h", "sim/shim/backend.h", "algorithms/algorithm.h",
                      "sim/backends/simgrid/engine.h"]:
                os.makedirs(os.path.join(d, os.path.dirname(f)), exist_ok=True)
                open(os.path.join(d, f), "w").close()
            os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
            if not check(d):
                print("FAIL self-test: not caught: " + what)
                failures += 1
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "algorithms"))
        os.makedirs(os.path.join(d, "sim/shim"))
        open(os.path.join(d, "sim/shim/shim.h"), "w").close()
        open(os.path.join(d, "sim/shim/workload.h"), "w").close()
        with open(os.path.join(d, "algorithms/a.c"), "w") as f:
            f.write('#include "sim/shim/shim.h"\n#include "sim/shim/workload.h"\n#include <stdlib.h>\n')
        # a function of the longest length allowed, and a long one that is a stated exception
        with open(os.path.join(d, "algorithms/b.c"), "w") as f:
            f.write(function_text("f", MAX_FUNCTION_LINES, 4) + function_text("g", 20))
        for exempt, exempt_name in list(LONG_FUNCTIONS)[:1]:
            os.makedirs(os.path.join(d, os.path.dirname(exempt)), exist_ok=True)
            with open(os.path.join(d, exempt), "w") as f:
                f.write(function_text(exempt_name, 3 * MAX_FUNCTION_LINES))
        if check(d):
            print("FAIL self-test: a clean tree is refused: %s" % check(d))
            failures += 1
    counts = [(n, l) for n, _, l in functions(function_text("f", 40, 3) + function_text("g", 7))]
    if counts != [("f", 40), ("g", 7)]:
        print("FAIL self-test: functions of 40 and 7 lines counted as %s" % counts)
        failures += 1
    return failures, len(cases) + 2


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    failures, self_tests = self_test()
    counted = [0]
    longest = []
    problems = [] if sys.argv[1] == "--self-test" else check(sys.argv[1], counted, longest)
    for p in problems:
        print("FAIL " + p)
    bad = failures + len(problems)
    print("layout: %d source files in rooms checked" % counted[0])
    if longest:
        print("longest functions (limit %d lines; * a stated exception):" % MAX_FUNCTION_LINES)
        for length, rel, line, name in sorted(longest, key=lambda f: (-f[0], f[1], f[2]))[:10]:
            print("  %4d  %s:%d %s%s" % (length, rel, line, name, " *" if (rel, name) in LONG_FUNCTIONS else ""))
    print("%d passed, %d failed" % (counted[0] + self_tests - bad if not problems else self_tests - failures, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

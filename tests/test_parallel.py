#!/usr/bin/env python3
"""Sweeps in parallel and in shards, progress on a terminal, the forms people compare with.

- sweep --jobs 2 gives the rows of --jobs 1 (wall columns aside), in the order runs finish; a run
  that cannot fit in memory even alone waits for the run in flight and is refused alone, in one line;
- --shard I/N: the shares of a sweep are disjoint and cover it, and merge joins them into the
  local sweep's rows, in its order; merge refuses rows of another sweep and names missing runs;
  --resume of a shard keeps its rows; --emit-slurm writes a script bash can read;
- run's progress line never appears when stdout is a file, and appears under a pseudo-terminal;
- the nccl-tests figures equal their formulas for the ring at P = 8 (summary.json and analyze);
- analyze --format csv, json and markdown parse.

usage: test_parallel.py SPARSIM
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile



def measured(column):
    """a column measured on the machine, not simulated (traces/sweep_columns.h)"""
    return "wall" in column or column == "peak_rss_bytes"

SWEEP = ["sweep", "--algo", "ring,topka,gtopk,oktopk", "--ranks", "2,3,4,8", "--n", "4K", "--iters", "2"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what, flush=True)


# AddressSanitizer's note on SimGrid's stack switching (every run of a
# sanitizer build prints it): the test environment's, not sparsim's output
ASAN_STACK_NOTE = re.compile(r"^==\d+==WARNING: ASan is ignoring requested __asan_handle_no_return.*\n"
                             r"False positive error reports may follow\n"
                             r"For details see https://github.com/google/sanitizers/issues/189\n", re.M)


def run(sparsim, args, cwd, **kw):
    p = subprocess.run([sparsim] + args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=600, **kw)
    p.stderr = ASAN_STACK_NOTE.sub("", p.stderr)
    return p


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def strip(rs):
    return [{k: v for k, v in r.items() if not measured(k)} for r in rs]


def by_index(rs):
    return sorted(strip(rs), key=lambda r: int(r["run_index"]))


def main():
    sparsim = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sparsim-parallel-")
    try:
        # --jobs 1 against --jobs 2
        p1 = run(sparsim, SWEEP + ["--jobs", "1", "--out", "j1.csv"], work)
        p2 = run(sparsim, SWEEP + ["--jobs", "2", "--out", "j2.csv"], work)
        check(p1.returncode == 0 and p2.returncode == 0, "sweeps: %s %s" % (p1.stderr, p2.stderr))
        j1, j2 = rows(os.path.join(work, "j1.csv")), rows(os.path.join(work, "j2.csv"))
        check(len(j1) == 16, "--jobs 1 made %d rows, not 16" % len(j1))
        check([int(r["run_index"]) for r in j1] == list(range(16)), "--jobs 1 rows out of the sweep's order")
        check(by_index(j1) == by_index(j2), "--jobs 2 rows differ from --jobs 1 rows (wall columns aside)")
        check(len({r["sweep_id"] for r in j1 + j2}) == 1, "one sweep, one sweep_id")
        check(all(r["status"] == "ok" and r["runs"] == "16" for r in j1 + j2), "every run ok, of 16")

        # memory: a run that cannot fit even alone waits for the one in flight, then is refused alone
        p = run(sparsim, ["sweep", "--algo", "ring", "--ranks", "2,4096", "--n", "16M", "--payload", "exact", "--iters",
                          "1", "--jobs", "2", "--out", "mem.csv"], work)
        mem = rows(os.path.join(work, "mem.csv"))
        check(p.returncode == 1 and [r["status"] for r in mem] == ["ok", "bad-input"] and
              p.stderr.count("\n") == 1 and "needs about" in p.stderr and "more than" in p.stderr,
              "a run too large for the machine: %d %r %r" % (p.returncode, [r["status"] for r in mem], p.stderr))

        # shards: disjoint, covering, merged into the local sweep row for row
        seen = {}
        for i in range(1, 4):
            p = run(sparsim, SWEEP + ["--shard", "%d/3" % i, "--out", "s%d.csv" % i], work)
            check(p.returncode == 0, "shard %d/3: %s" % (i, p.stderr))
            for r in rows(os.path.join(work, "s%d.csv" % i)):
                k = int(r["run_index"])
                check(k not in seen, "run %d in shards %s and %d" % (k, seen.get(k), i))
                check(k % 3 == i - 1, "run %d in shard %d/3" % (k, i))
                seen[k] = i
        check(sorted(seen) == list(range(16)), "the shards cover runs %s, not 0..15" % sorted(seen))
        # a shard resumed: nothing runs again
        p = run(sparsim, SWEEP + ["--shard", "2/3", "--out", "s2.csv", "--resume"], work)
        check(p.returncode == 0 and "0 runs (0 failed), 5 already" in p.stdout, "resumed shard: %r %r" %
              (p.stdout, p.stderr))
        p = run(sparsim, ["merge", "--out", "m.csv", "s3.csv", "s1.csv", "s2.csv"], work)
        check(p.returncode == 0 and "16 of 16 runs" in p.stdout, "merge: %r %r" % (p.stdout, p.stderr))
        m = rows(os.path.join(work, "m.csv"))
        check(strip(m) == strip(j1), "merged shards differ from the local sweep (wall columns aside)")
        with open(os.path.join(work, "m.csv")) as f, open(os.path.join(work, "j1.csv")) as g:
            check(f.readline() == g.readline(), "merged header differs")
        # missing runs: named, the rest written, exit 1
        p = run(sparsim, ["merge", "--out", "part.csv", "s1.csv", "s3.csv"], work)
        check(p.returncode == 1 and p.stderr.count("\n") == 1 and "5 of 16 runs are missing (run_index 1, 4, 7, 10, 13)"
              in p.stderr, "merge with a shard missing: %d %r" % (p.returncode, p.stderr))
        check(len(rows(os.path.join(work, "part.csv"))) == 11, "the partial merge holds the 11 runs there")
        # another sweep: refused, nothing written
        p = run(sparsim, ["sweep", "--algo", "ring", "--ranks", "2", "--n", "4K", "--iters", "2", "--out", "o.csv"],
                work)
        p = run(sparsim, ["merge", "--out", "mixed.csv", "s1.csv", "o.csv"], work)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and "different sweeps" in p.stderr,
              "mixed sweeps: %d %r" % (p.returncode, p.stderr))
        check(not os.path.exists(os.path.join(work, "mixed.csv")), "a refused merge wrote its output")
        # the batch script
        p = run(sparsim, SWEEP + ["--out", "all.csv", "--emit-slurm", "job.sh", "--slurm-shards", "4"], work)
        check(p.returncode == 0, "--emit-slurm: %s" % p.stderr)
        text = open(os.path.join(work, "job.sh")).read()
        check("#SBATCH --array=1-4\n" in text and '--shard "$i/4"' in text and "--resume" in text,
              "the script lacks the array or the shard: %s" % text)
        check(subprocess.run(["bash", "-n", os.path.join(work, "job.sh")]).returncode == 0, "bash cannot read job.sh")

        # progress: never into a file, on a terminal
        prog = ["run", "--algo", "topka", "--ranks", "64", "--n", "256K", "--iters", "4"]
        with open(os.path.join(work, "out.txt"), "w") as out:
            p = subprocess.run([sparsim] + prog + ["--out", "r1"], cwd=work, stdout=out, stderr=subprocess.PIPE,
                               text=True, timeout=600)
        text = open(os.path.join(work, "out.txt")).read()
        check(p.returncode == 0 and "run: iteration" not in text + p.stderr and "\r" not in text + p.stderr,
              "progress with stdout in a file: %r %r" % (text[:200], p.stderr[:200]))
        if shutil.which("script"):
            cmd = " ".join([sparsim] + prog + ["--out", "r2"])
            p = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=work, capture_output=True, timeout=600)
            said = p.stdout.decode(errors="replace")  # bytes: a text stream would turn \r into \n
            check(p.returncode == 0 and "\rrun: iteration" in said and "msgs/s" in said,
                  "no progress line under a pseudo-terminal: %r" % said[:300])
            p = subprocess.run(["script", "-qec", " ".join([sparsim] + prog + ["--out", "r3", "--quiet"]), "/dev/null"], cwd=work, capture_output=True,
                               text=True, timeout=600)
            check(p.returncode == 0 and "run: iteration" not in p.stdout, "progress with --quiet: %r" % p.stdout[:300])
        else:
            print("SKIP progress under a pseudo-terminal: no 'script' here")

        # nccl-tests' figures of the ring at P = 8
        n, P = 65536, 8
        p = run(sparsim, ["run", "--algo", "ring", "--ranks", str(P), "--n", str(n), "--iters", "2", "--out", "ring8"],
                work)
        check(p.returncode == 0 and "as nccl-tests: size 262144 B" in p.stdout, "ring at P = 8: %r" % p.stdout)
        s = json.load(open(os.path.join(work, "ring8", "summary.json")))
        nc, t = s["nccl"], s["time_per_iter_s"]["mean"]
        check(s["schema_version"] >= 1, "summary.json lacks its schema_version")
        check(nc["size_bytes"] == 4 * n and nc["effective_size"] is False, "size: %r" % nc)
        check(abs(nc["time_s"] - t) <= 1e-12 * t, "time: %r against %r" % (nc["time_s"], t))
        check(abs(nc["algbw_Bps"] - 4 * n / t) <= 1e-9 * nc["algbw_Bps"], "algbw: %r" % nc)
        check(abs(nc["bus_factor"] - 2 * (P - 1) / P) < 1e-12, "bus factor: %r" % nc)
        check(abs(nc["busbw_Bps"] - 4 * n / t * 2 * (P - 1) / P) <= 1e-9 * nc["busbw_Bps"], "busbw: %r" % nc)
        p = run(sparsim, ["run", "--algo", "topka", "--ranks", str(P), "--n", str(n), "--iters", "2", "--out", "topka8"],
                work)
        s = json.load(open(os.path.join(work, "topka8", "summary.json")))
        check(s["nccl"]["effective_size"] is True and s["nccl"]["size_bytes"] == 4 * n and
              s["nccl"]["selection_bytes_per_rank"] == 8 * s["k"], "topka: %r" % s["nccl"])

        # analyze --format: csv, json and markdown parse and agree
        p = run(sparsim, ["analyze", "--format", "csv", "j1.csv"], work)
        check(p.returncode == 0, "analyze csv: %s" % p.stderr)
        table = list(csv.DictReader(io.StringIO(p.stdout)))
        check(len(table) == 16, "analyze csv: %d rows" % len(table))
        for r, src in zip(table, j1):
            P, t = int(r["ranks"]), float(r["time_per_iter_s"])
            check(r["algo"] == src["algo"] and float(r["size_bytes"]) == 4 * float(src["n"]), "csv size: %r" % r)
            check(abs(float(r["busbw_Bps"]) - 4 * float(src["n"]) / t * 2 * (P - 1) / P) <= 1e-6 *
                  float(r["busbw_Bps"]), "csv busbw: %r" % r)
        p = run(sparsim, ["analyze", "--format=json", "ring8"], work)
        check(p.returncode == 0, "analyze json: %s" % p.stderr)
        doc = json.loads(p.stdout)
        check(doc["schema_version"] >= 1 and len(doc["runs"]) == 1 and doc["runs"][0]["bus_factor"] == 1.75 and
              set(doc["columns"]) == set(doc["runs"][0]), "analyze json: %r" % doc)
        p = run(sparsim, ["analyze", "--format", "markdown", "j1.csv"], work)
        lines = p.stdout.splitlines()
        check(p.returncode == 0 and len(lines) == 18 and all(l.startswith("|") and l.endswith("|") for l in lines)
              and set(lines[1]) <= set("|-:") and len({l.count("|") for l in lines}) == 1,
              "analyze markdown: %r" % p.stdout[:400])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

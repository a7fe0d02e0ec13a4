# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Before and after: per-step times of two source trees' packages, paired.

`python -m benchmarks` times its configurations in one process, but one
process cannot import two versions of the package. This module alternates
whole runs of the benchmark instead, one process a run, between two trees:
round r runs the before tree then the after tree when r is even, the after
tree first when it is odd, so that a drift of the machine's speed hits both
alike. Every run is the same benchmark, this clone's `benchmarks` package
(the same models, runners and clocks), with PYTHONPATH set to the tree
whose package it times: only the package differs. Each run's JSON names
the package it imported, and a run that imported another is an error.

For each case and configuration it prints the median over rounds of each
tree's per-step median (wall), and the paired ratio after/before: the
geometric mean over rounds of each round's ratio, with a t-based 95%
interval (the logs of the ratios, n - 1 degrees of freedom). The same for
the ratios to bare, which take out what the two runs of a round share. The
configurations `bare` and `tf115` run no package code: their ratios show
the drift between runs that the pairing did not cancel, and a difference
smaller than theirs is not established. Passing the after tree as
`--before` times it against itself (an A/A run): its intervals show what
the method can resolve.

A before tree without `keep_sparse_gradients` (before issue 41) kept every
sparse gradient sparse: there the after tree's `lso_exp_sparse` is paired
with the before tree's `lso_exp` (the same training run), and
`tf115_check`, which needs the option, is timed in the after tree only.

A git revision given as `--before` is checked out once, detached, as a
`git worktree` under the system's temporary directory (never inside the
repository), and reused by later calls.

Usage, from the root of a clone:
  python -m benchmarks.pair --before b1af54d            # ~15 min
  python -m benchmarks.pair --before b1af54d --quick    # smoke test
  python -m benchmarks.pair --before /tmp/tree --pairs 20 \\
      --json pair.json -- --intra-op-threads 2 --inter-op-threads 2
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import stats

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BENCHMARK = os.path.join(_REPO, "benchmarks")
# Each run: this clone's `benchmarks` with the timed tree's package. The
# package `benchmarks` is imported while this clone is first on the path,
# then the clone leaves the path, so that `contrib_mixed_precision` comes
# from PYTHONPATH (the tree) alone. `-c` puts the working directory first
# on the path: it goes too, so that a package there cannot shadow the tree's.
_LAUNCH = """
import runpy, sys
repo = sys.argv.pop(1)
if sys.path and sys.path[0] == "":
  del sys.path[0]
sys.path.insert(0, repo)
import benchmarks
del sys.path[0]
runpy.run_module("benchmarks", run_name="__main__", alter_sys=True)
"""
_DEFAULT_CASES = "mlp_graph,emb_graph"
_DEFAULT_CONFIGS = "bare,tf115,lso_exp,lso_fixed,lso_exp_sparse"
# After-tree configurations a tree without the sparse opt-in cannot build,
# and what they are paired with there (None: not timed there).
_NEEDS_OPT_IN = {"lso_exp_sparse": "lso_exp", "tf115_check": None}


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      prog="python -m benchmarks.pair", description=__doc__,
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--before", required=True, metavar="TREE_OR_REV",
                      help="the tree timed first: a directory holding "
                      "contrib_mixed_precision/, or a git revision of this "
                      "clone (checked out as a worktree under {})".format(
                          tempfile.gettempdir()))
  parser.add_argument("--after", default=_REPO, metavar="TREE",
                      help="the tree timed second (default: this clone's "
                      "working tree, %(default)s)")
  parser.add_argument("--pairs", type=int, default=None,
                      help="alternating rounds, each a run of both trees "
                      "(default 10, 2 with --quick; at least 2 for an "
                      "interval)")
  parser.add_argument("--bench-rounds", type=int, default=10,
                      help="the benchmark's --rounds in every run (default "
                      "%(default)s: the pairs give the replication)")
  parser.add_argument("--cases", default=_DEFAULT_CASES,
                      help="the benchmark's cases (default %(default)s)")
  parser.add_argument("--configs", default=_DEFAULT_CONFIGS,
                      help="the benchmark's configurations (default "
                      "%(default)s; bare always runs)")
  parser.add_argument("--quick", action="store_true",
                      help="the benchmark's --quick and 2 rounds: a smoke "
                      "test only")
  parser.add_argument("--python", default=sys.executable,
                      help="the interpreter of the runs (default: this one)")
  parser.add_argument("--json", metavar="PATH",
                      help="also write every round's figures to PATH")
  parser.add_argument("benchmark_args", nargs="*", metavar="-- ARGS",
                      help="after `--`: more arguments for every benchmark "
                      "run (--rounds, --steps, --intra-op-threads, ...)")
  args = parser.parse_args(argv)
  if args.pairs is None:
    args.pairs = 2 if args.quick else 10
  if args.pairs < 1:
    parser.error("`--pairs` must be at least 1; received {}.".format(
        args.pairs))
  return args


def _inside(path, directory):
  path, directory = os.path.realpath(path), os.path.realpath(directory)
  return os.path.commonpath([path, directory]) == directory


def _tree(spec, repo):
  """`spec` as a tree: a directory, or a git revision checked out once."""
  if os.path.isdir(spec):
    tree = os.path.abspath(spec)
  else:
    sha = subprocess.run(
        ["git", "-C", repo, "rev-parse", "--verify", spec + "^{commit}"],
        capture_output=True, text=True, check=False)
    if sha.returncode != 0:
      raise SystemExit("`--before` {!r} is neither a directory nor a git "
                       "revision of {}: {}".format(spec, repo,
                                                   sha.stderr.strip()))
    tree = os.path.join(tempfile.gettempdir(),
                        "contrib_mp_tree_" + sha.stdout.strip()[:12])
    if not os.path.isdir(tree):
      # Detached: no branch is created, and the clone's checkout is not
      # touched.
      made = subprocess.run(
          ["git", "-C", repo, "worktree", "add", "--detach", tree,
           sha.stdout.strip()], capture_output=True, text=True, check=False)
      if made.returncode != 0:
        raise SystemExit("git worktree add {} failed: {}".format(
            tree, made.stderr.strip()))
      print("checked out {} at {}".format(spec, tree), flush=True)
  if _inside(tree, repo) and os.path.realpath(tree) != os.path.realpath(
      repo):
    raise SystemExit("the tree {} is inside the repository {}: put it "
                     "outside (e.g. under {}).".format(
                         tree, repo, tempfile.gettempdir()))
  if not os.path.isdir(os.path.join(tree, "contrib_mixed_precision")):
    raise SystemExit("{} holds no contrib_mixed_precision/ package.".format(
        tree))
  return tree


def _has_opt_in(tree):
  """Whether the tree's optimizer takes `keep_sparse_gradients`."""
  path = os.path.join(tree, "contrib_mixed_precision",
                      "loss_scale_optimizer.py")
  with open(path) as f:
    return "keep_sparse_gradients" in f.read()


def _run(tree, configs, args, path):
  """One benchmark run of `tree`'s package; its JSON report."""
  env = dict(os.environ)
  env["PYTHONPATH"] = tree
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  command = [args.python, "-c", _LAUNCH, _REPO, "--cases", args.cases,
             "--configs", ",".join(configs), "--json", path]
  command += ["--quick"] if args.quick else ["--rounds",
                                               str(args.bench_rounds)]
  command += args.benchmark_args
  result = subprocess.run(command, env=env, capture_output=True, text=True,
                          check=False)
  if result.returncode != 0:
    shown = [args.python, "-m", "benchmarks"] + command[4:]
    raise SystemExit("the benchmark failed on {} ({}):\n{}".format(
        tree, " ".join(shown), result.stderr[-3000:]))
  with open(path) as f:
    report = json.load(f)
  package = report["machine"].get("package")
  if package is None or not _inside(package, tree):
    raise SystemExit("the run meant for {} imported the package at {}: is "
                     "it installed, or on a path before PYTHONPATH?".format(
                         tree, package))
  return report


def _pairs(case_rows):
  """(label, before config, after config) for every pair that both ran."""
  before, after = case_rows
  pairs = []
  for name in after:
    if name in before:
      pairs.append((name, name, name))
    elif _NEEDS_OPT_IN.get(name) in before:
      old = _NEEDS_OPT_IN[name]
      pairs.append(("{} (before: {})".format(name, old), old, name))
  return pairs


def _summarise(rounds, cases):
  """Per case and pair: medians, and the paired ratios with intervals."""
  summary = {}
  for case in cases:
    first = (rounds[0]["before"]["results"][case],
             rounds[0]["after"]["results"][case])
    summary[case] = {}
    for label, old, new in _pairs(first):
      b = [r["before"]["results"][case][old] for r in rounds]
      a = [r["after"]["results"][case][new] for r in rounds]
      summary[case][label] = {
          "before_ms": [row["median_ms"] for row in b],
          "after_ms": [row["median_ms"] for row in a],
          "wall": stats.paired_ratio([row["median_ms"] for row in b],
                                [row["median_ms"] for row in a]),
          "x_bare": stats.paired_ratio([row["ratio"] for row in b],
                                  [row["ratio"] for row in a]),
      }
  return summary


def _interval(paired):
  ci = paired["ci95"]
  return "{:.3f} [{}]".format(
      paired["ratio"],
      "{:.3f}, {:.3f}".format(*ci) if ci else "n/a: one round")


def _table(summary):
  row = "{:<11} {:<32} {:>10} {:>10} {:>27} {:>27}"
  lines = [row.format("case", "config", "before ms", "after ms",
                      "after/before [95% CI]", "x bare: after/before")]
  lines.append("-" * len(lines[0]))
  for case, pairs in summary.items():
    for label, figures in pairs.items():
      lines.append(row.format(
          case, label, "{:.3f}".format(statistics.median(
              figures["before_ms"])),
          "{:.3f}".format(statistics.median(figures["after_ms"])),
          _interval(figures["wall"]),
          "" if label == "bare" else _interval(figures["x_bare"])))
  return "\n".join(lines)


def main(argv=None):
  args = _parse_args(argv)
  before = _tree(args.before, _REPO)
  after = _tree(args.after, _REPO)
  configs = [c for c in args.configs.split(",") if c]
  before_configs = list(configs)
  if not _has_opt_in(before):
    # What the before tree cannot build goes; its old equivalent comes.
    before_configs = [c for c in configs if c not in _NEEDS_OPT_IN]
    for name in configs:
      old = _NEEDS_OPT_IN.get(name)
      if old is not None and old not in before_configs:
        before_configs.append(old)
  cases = [c for c in args.cases.split(",") if c]
  print("before: {} ({})\nafter:  {} ({})\nbenchmark: {}; {} rounds, "
        "alternating".format(before, ",".join(before_configs), after,
                             ",".join(configs), _BENCHMARK, args.pairs),
        flush=True)
  rounds = []
  start = time.perf_counter()
  with tempfile.TemporaryDirectory() as tmp:
    for r in range(args.pairs):
      order = [("before", before, before_configs), ("after", after, configs)]
      if r % 2:
        order.reverse()
      figures = {}
      times = []
      for side, tree, names in order:
        begun = time.perf_counter()
        figures[side] = _run(tree, names, args,
                             os.path.join(tmp, "{}_{}.json".format(r, side)))
        times.append("{} {:.0f}s".format(side, time.perf_counter() - begun))
      rounds.append(figures)
      print("round {}/{}: {}; load {}".format(
          r + 1, args.pairs, ", ".join(times),
          ",".join("%.1f" % l for l in os.getloadavg())), flush=True)
  summary = _summarise(rounds, cases)
  print()
  print(_table(summary))
  print("\nbefore/after ms: medians over rounds of each run's median "
        "per-step wall time; after/before: the geometric mean over rounds "
        "of each round's ratio, with a t-based 95% interval; x bare: the "
        "same for each run's ratio to its own bare. bare and tf115 run no "
        "package code: their ratios are the drift the pairing left. Total "
        "{:.0f}s.".format(time.perf_counter() - start))
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"before": before, "after": after, "pairs": args.pairs,
                 "before_configs": before_configs, "after_configs": configs,
                 "machines": [{side: r[side]["machine"] for side in r}
                              for r in rounds],
                 "summary": summary}, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())

# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Before and after: per-step times of two source trees' packages, paired.

scripts/benchmark.py times its configurations in one process, but one
process cannot import two versions of the package. This script alternates
whole runs of the benchmark instead, one process a run, between two trees:
round r runs the before tree then the after tree when r is even, the after
tree first when it is odd, so that a drift of the machine's speed hits both
alike. Every run is the same script, this clone's scripts/benchmark.py
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

Usage:
  python scripts/benchmark_pair.py --before b1af54d            # ~15 min
  python scripts/benchmark_pair.py --before b1af54d --quick    # smoke test
  python scripts/benchmark_pair.py --before /tmp/tree --pairs 20 \\
      --json pair.json -- --intra-op-threads 2 --inter-op-threads 2
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BENCHMARK = os.path.join(_REPO, "scripts", "benchmark.py")
_DEFAULT_CASES = "mlp_graph,emb_graph"
_DEFAULT_CONFIGS = "bare,tf115,lso_exp,lso_fixed,lso_exp_sparse"
# After-tree configurations a tree without the sparse opt-in cannot build,
# and what they are paired with there (None: not timed there).
_NEEDS_OPT_IN = {"lso_exp_sparse": "lso_exp", "tf115_check": None}
# Two-sided 95% quantiles of Student's t, for 1 to 30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
         2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
         2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
         2.048, 2.045, 2.042)


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
  command = [args.python, _BENCHMARK, "--cases", args.cases, "--configs",
             ",".join(configs), "--json", path]
  command += ["--quick"] if args.quick else ["--rounds",
                                               str(args.bench_rounds)]
  command += args.benchmark_args
  result = subprocess.run(command, env=env, capture_output=True, text=True,
                          check=False)
  if result.returncode != 0:
    raise SystemExit("the benchmark failed on {} ({}):\n{}".format(
        tree, " ".join(command), result.stderr[-3000:]))
  with open(path) as f:
    report = json.load(f)
  package = report["machine"].get("package")
  if package is None or not _inside(package, tree):
    raise SystemExit("the run meant for {} imported the package at {}: is "
                     "it installed, or on a path before PYTHONPATH?".format(
                         tree, package))
  return report


def _t975(df):
  if df <= len(_T975):
    return _T975[df - 1]
  # Cornish-Fisher expansion around the normal quantile: within 0.001
  # beyond 30 degrees of freedom.
  z = 1.959964
  return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (
      96 * df**2)


def _paired_ratio(before, after):
  """Geometric mean of after/before over rounds, and its 95% interval."""
  logs = [math.log(a / b) for a, b in zip(after, before)]
  mean = statistics.fmean(logs)
  if len(logs) < 2:
    return {"ratio": math.exp(mean), "ci95": None}
  half = _t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
  return {"ratio": math.exp(mean),
          "ci95": [math.exp(mean - half), math.exp(mean + half)]}


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
          "wall": _paired_ratio([row["median_ms"] for row in b],
                                [row["median_ms"] for row in a]),
          "x_bare": _paired_ratio([row["ratio"] for row in b],
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

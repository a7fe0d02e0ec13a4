# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The statistics: medians, ratios to bare, and paired 95% intervals.

Within one run, `summarise` takes the per-round samples of each
configuration to medians and ratios, and `add_reference_points` pairs
each row with the references round by round (a distribution-free interval
for the median). Across runs, `paired_ratio` gives `benchmarks.pair` a
geometric mean of ratios with a t-based interval. No TensorFlow here:
`benchmarks.pair` imports this alone.
"""

import math
import statistics


def summarise(samples, reference="bare"):
  """Medians and ratios to `reference`.

  Wall time is what a user waits for, but on a shared machine it swings
  with other processes. Process CPU time (all threads) measures the work a
  configuration adds and is far steadier; it cannot see idle time on the
  critical path, so both are reported.
  """
  ref_wall, ref_cpu = samples[reference]
  rows = {}
  for name, (wall, cpu) in samples.items():
    # Ratios within each round pair measurements taken moments apart.
    ratios = sorted(v / r for v, r in zip(wall, ref_wall))
    q1, q3 = _quartiles(ratios)
    rows[name] = {
        "median_ms": statistics.median(wall) * 1e3,
        "ratio": statistics.median(wall) / statistics.median(ref_wall),
        "round_ratio_median": statistics.median(ratios),
        "round_ratio_iqr": [q1, q3],
        "cpu_median_ms": statistics.median(cpu) * 1e3,
        "cpu_ratio": statistics.median(cpu) / statistics.median(ref_cpu),
        "samples_ms": [v * 1e3 for v in wall],
        "cpu_samples_ms": [v * 1e3 for v in cpu],
    }
  return rows


def _quartiles(sorted_values):
  if len(sorted_values) < 2:
    return sorted_values[0], sorted_values[0]
  q = statistics.quantiles(sorted_values, n=4, method="inclusive")
  return q[0], q[2]


# Every row's distance from these, paired within rounds (median + 95% CI),
# and from the first three also as a difference of medians. `tf115` is the
# exact default's floor; `unscale_floor` the sparse opt-in's reference.
_PAIRED_REFERENCES = ("tf115", "unscale_floor", "barrier", "tf_mp")
_MEDIAN_REFERENCES = ("tf115", "unscale_floor", "barrier")


def add_reference_points(rows):
  """Each row's distance from the references, in points of bare.

  `points_over_<ref>` (wall) and `cpu_points_over_<ref>` compare medians,
  for `tf115`, `unscale_floor` and `barrier`. The paired figures, for those and
  `tf_mp`, compare within each round, where the configurations ran moments
  apart: round r's difference is 100 * (t_r - ref_r) / bare_r, and the
  median of those comes with a 95% confidence interval (`_median_ci`), in
  `paired_points_over_<ref>` (wall) and `cpu_paired_points_over_<ref>`.
  `paired_ratio_to_bare` is the same for the per-round ratio to bare,
  and `paired_ratio_to_tf115` for the ratio to TF 1.15's step. A
  goal ("within 2 points", "below tf_mp") is supported by the data when
  the whole interval meets it. Every row gets them, variants included;
  references missing from `rows` are left out.
  """
  bare = rows["bare"]
  for row in rows.values():
    ratios = [v / b for v, b in zip(row["samples_ms"], bare["samples_ms"])]
    row["paired_ratio_to_bare"] = {"median": statistics.median(ratios),
                                   "ci95": _median_ci(ratios)}
    if "tf115" in rows:
      ratios = [v / t for v, t in zip(row["samples_ms"],
                                      rows["tf115"]["samples_ms"])]
      row["paired_ratio_to_tf115"] = {"median": statistics.median(ratios),
                                      "ci95": _median_ci(ratios)}
    for other in _MEDIAN_REFERENCES:
      if other in rows:
        row["points_over_" + other] = 100 * (row["ratio"] -
                                             rows[other]["ratio"])
        row["cpu_points_over_" + other] = 100 * (row["cpu_ratio"] -
                                                 rows[other]["cpu_ratio"])
    for other in _PAIRED_REFERENCES:
      if other not in rows:
        continue
      for prefix, key in (("", "samples_ms"), ("cpu_", "cpu_samples_ms")):
        diffs = [100 * (v - o) / b for v, o, b in zip(
            row[key], rows[other][key], bare[key])]
        row[prefix + "paired_points_over_" + other] = {
            "median": statistics.median(diffs),
            "ci95": _median_ci(diffs)}
    # What the package gains on each other row (a variant: the package's
    # old code, or a prototype), paired the same way: lso_exp minus it.
    if "lso_exp" in rows:
      package = rows["lso_exp"]
      for prefix, key in (("", "samples_ms"), ("cpu_", "cpu_samples_ms")):
        diffs = [100 * (p - v) / b for p, v, b in zip(
            package[key], row[key], bare[key])]
        row[prefix + "paired_lso_exp_minus_this"] = {
            "median": statistics.median(diffs),
            "ci95": _median_ci(diffs)}


def _median_ci(values, confidence=0.95):
  """A distribution-free confidence interval for the median of `values`.

  The order statistics (k-th smallest, k-th largest) with the largest k for
  which the median lies between them with probability `confidence` or more
  (the binomial sign-test interval). None when there are too few values for
  any such pair: 6 at least for 95%.
  """
  values = sorted(values)
  n = len(values)
  # P(fewer than k of n values fall below the median) = P(Bin(n, 1/2) < k).
  below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2**n
  k = 0
  while k + 1 <= n // 2 and 2 * below(k + 1) <= 1 - confidence:
    k += 1
  if k == 0:
    return None
  return [values[k - 1], values[n - k]]


# Two-sided 95% quantiles of Student's t, for 1 to 30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
         2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
         2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
         2.048, 2.045, 2.042)


def _t975(df):
  if df <= len(_T975):
    return _T975[df - 1]
  # Cornish-Fisher expansion around the normal quantile: within 0.001
  # beyond 30 degrees of freedom.
  z = 1.959964
  return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (
      96 * df**2)


def paired_ratio(before, after):
  """Geometric mean of after/before over rounds, and its 95% interval."""
  logs = [math.log(a / b) for a, b in zip(after, before)]
  mean = statistics.fmean(logs)
  if len(logs) < 2:
    return {"ratio": math.exp(mean), "ci95": None}
  half = _t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
  return {"ratio": math.exp(mean),
          "ci95": [math.exp(mean - half), math.exp(mean + half)]}

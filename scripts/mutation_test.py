# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Mutation testing of the step's code: do the tests notice each mutant?

A small runner of our own (mutmut and cosmic-ray re-import TensorFlow for
every mutant of every line, which takes hours here). `MUTANTS` lists
hand-written mutants of the step's modules (`SCORED`), _tf_compat.py and
_validation.py: each is a snippet of a module, what it becomes, and the
fast tests that should fail. A mutant that changes a number is judged by
TF 1.15's optimizer (tests/tf115_reference.py, through the tests that
compare with it), never by the package itself.

The repository is copied once to a temporary directory; each mutant is
applied to that copy only (never to the working tree, which other processes
import), the named tests run there with the given interpreter, and the
file is restored. A mutant is killed when its tests fail (or time out);
it survives when they pass. The score counts the modules of the step
(`SCORED`); _validation.py's and _tf_compat.py's mutants are reported
apart.

Not part of CI: a whole run takes about 15 minutes on 2 cores.
tests/mutation_list_test.py checks that every snippet still occurs exactly
once, so the list cannot rot silently when the modules change.

Usage:
  python scripts/mutation_test.py                    # every mutant
  python scripts/mutation_test.py --only S03,L01     # some of them
  python scripts/mutation_test.py --list             # the list, no runs
  python scripts/mutation_test.py --python PATH      # another interpreter
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DEFAULT_PYTHON = os.path.expanduser(
    "~/.cache/contrib_mixed_precision/nox/tests-tf221/bin/python")

Mutant = collections.namedtuple("Mutant", "id file old new tests what")

_SD = "contrib_mixed_precision/skip_decision.py"
_KF = "contrib_mixed_precision/known_flags.py"
_RC = "contrib_mixed_precision/replica_consensus.py"
_LS = "contrib_mixed_precision/loss_scale.py"
_LSO = "contrib_mixed_precision/loss_scale_optimizer.py"
_SR = "contrib_mixed_precision/sync_replicas.py"
_VAL = "contrib_mixed_precision/_validation.py"
_UN = "contrib_mixed_precision/unscale.py"
_TFC = "contrib_mixed_precision/_tf_compat.py"
_STEP = "contrib_mixed_precision/step_scale.py"
_KLSO = "contrib_mixed_precision/keras_loss_scale_optimizer.py"
# The upgrade command (reported apart from the score).
_U_SIG = "contrib_mp_upgrade/signals.py"
_U_COMMIT = "contrib_mp_upgrade/commit.py"
_U_CHECK = "contrib_mp_upgrade/check.py"
_U_CLI = "contrib_mp_upgrade/cli.py"
_U_WORKERS = "contrib_mp_upgrade/workers.py"
_U_WALK = "contrib_mp_upgrade/walk.py"
_U_NOTEBOOK = "contrib_mp_upgrade/notebook.py"
_U_BLOCKERS = "contrib_mp_upgrade/blockers.py"
# This round's TF 2.x converter (issue 52, done-means 3).
_U_TF2X = "contrib_mp_upgrade/tf2x_names.py"
_U_PINS = "contrib_mp_upgrade/pins.py"
_U_REPORT = "contrib_mp_upgrade/report.py"
_U_KERAS2 = "contrib_mp_upgrade/keras2.py"
# The modules the score is given for.
SCORED = (_SD, _KF, _RC, _LS, _LSO, _SR, _UN, _STEP, _KLSO)

_EAGER = "tests/eager_compiled_test.py"
_DUP = "tests/duplicate_sum_test.py"
_UNSCALE = "tests/unscale_test.py"
_SKIP = "tests/skip_decision_test.py"
_APPLIED = "tests/applied_update_test.py"
_WRAP = "tests/ps_cluster_test.py::WrapOrderTest"
_POLICY = "tests/policy_property_test.py::ExponentialPolicyPropertyTest"
_THREADS = ("tests/policy_property_test.py::ConcurrentStepsTest::"
            "test_every_step_of_every_thread_counts0")
_LSO_T = "tests/loss_scale_optimizer_test.py"
_LST = "tests/loss_scale_test.py"
_SHARED = "tests/shared_manager_test.py"
# TF 1.15's optimizer as the judge (docs/design.md, contract 15): fast cases of
# tf115_oracle_test.py, and the unscale's own in unscale_oracle_test.py.
_DEFECTS = "tests/tf115_oracle_test.py::Issue41DefectsTest::"
_ODD_SCALE = (_DEFECTS + "test_small_variables_of_one_shape_"
              "graph-many_small_sin-float32-sgd-fixed_3.0-5")
_DENSE_UPDATE = tuple(
    _DEFECTS + "test_embedding_gradient_takes_the_dense_update_"
    "{}-embedding-float32-momentum-fixed_128-4".format(mode)
    for mode in ("graph", "eager"))
_WIDE_SCALE = (_DEFECTS + "test_trainable_scale_variable_is_trained_as_"
               "tf115_trained_it_graph-mlp-float32-momentum-"
               "trainable_float64_3.0-3")
_XLA_ORACLE = "tests/unscale_oracle_test.py::XlaUnscaleTest"
_F64_ORACLE = "tests/unscale_oracle_test.py::Float64VariablesTest"
_USABLE = "tests/step_scale_test.py::UsableScaleTest"
_REFUSED = "tests/step_scale_test.py::RefusedScaleTest"
_U_EDGES = "tests/upgrade_hostile_run_test.py::CleanupAndCommitEdgesTest::"
_USER_LOSS_SCALE = "tests/step_scale_test.py::UserLossScaleTest"

# Issue 52's tests of the commit, the walk, the workers, the signals and
# the notebooks (all run the command, as a process or in process).
_U_HOSTILE = "tests/upgrade_hostile_run_test.py::"
_U_FINISH = _U_HOSTILE + "FinishFailsTest::"
_U_NEW_DIRS = _U_HOSTILE + "NewDirectoriesTest::"
_U_MODES = _U_HOSTILE + "OutputModesTest"
_U_TREE = "tests/upgrade_tree_test.py::UpgradeTreeSafetyTest::"
_U_TIMES = _U_TREE + "test_files_copied_unchanged_keep_their_times_and_modes"
_U_DIR_LINKS = _U_TREE + "test_copyotherfiles_false_keeps_links_to_directories"
_U_PROGRAM = "tests/upgrade_interrupt_test.py::InAProgramTest::"
_U_INTERRUPT = "tests/upgrade_interrupt_test.py::InterruptTest::"
_U_CELLS = "tests/upgrade_notebook_cells_test.py::NotebookCellsTest::"
_U_CR = _U_CELLS + "test_cell_with_cr_line_ends_is_converted_and_keeps_them"
_U_V1_SHAPES = "tests/upgrade_blockers_test.py::V1ShapesSwitchTest::"

# KerasLossScaleOptimizer against Keras 2 running the same program (every
# case of the class reads one pair of runs: the judge's and the converted).
_K2API = "tests/keras_loss_scale_optimizer_test.py::Keras2ApiTest::"
_K3STEP = "tests/keras_loss_scale_optimizer_test.py::Keras3StepTest::"

# The TF 2.x converter's tests: the converted text (tf2x_names_test), the
# pins (pins_test), and the converted programs run against tf-keras or TF's
# own loss scales (upgrade_keras2_test, upgrade_tf2x_test). The fast one
# comes first: `-x` stops at the first failure.
_T_NAMES = "tests/tf2x_names_test.py::"
_T_K2 = _T_NAMES + "Keras2NamesTest::"
_T_COMPILE = _T_NAMES + "CompileUnderPolicyTest::"
_T_K2_RUN = "tests/upgrade_keras2_test.py::ConvertedKeras2ProgramsTest::"
_T_PINS = "tests/pins_test.py::PinTest::"
_T_K2_LOOPS = _T_K2_RUN + "test_custom_loops_every_import_style"
_T_LATER = _T_PINS + "test_a_pin_of_tf_2_3_or_later_advances_iterations_"
_T_PINNED_RUN = "tests/upgrade_tf2x_test.py::PinnedTreeTest"
_T_KERAS2_TREE = "tests/upgrade_tf2x_test.py::Keras2TreeTest"
_T_KIND = _T_NAMES + "OptimizerKindTest::"
_T_V1_IN_KERAS = "tests/upgrade_tf2x_test.py::V1OptimizerInKerasFileTest"

MUTANTS = (
    # -- The seven survivors of issue 31, and the bound without its count.
    Mutant("L01", _LS,
           "      with _colocated_with(loss_scale):\n"
           "        mutex = tf.raw_ops.MutexV2(",
           "      with contextlib.nullcontext():\n"
           "        mutex = tf.raw_ops.MutexV2(",
           (_WRAP,), "the state's mutex is not colocated with loss_scale"),
    Mutant("S01", _SD,
           "  part_dtype = values.dtype.real_dtype\n",
           "  part_dtype = values.dtype.real_dtype\n"
           "  if part_dtype == tf.float64:\n"
           "    return None, False\n",
           (_DUP,), "_sparse_check returns early for float64"),
    Mutant("S02", _SD,
           "           if _values(g).dtype.is_floating or "
           "_values(g).dtype.is_complex]",
           "           if (_values(g).dtype.is_floating or "
           "_values(g).dtype.is_complex) and\n"
           "           not isinstance(g, tf.IndexedSlices)]",
           (_EAGER, _UNSCALE), "the check after the unscale (compiled eager "
           "steps, functions) drops IndexedSlices"),
    Mutant("O01", _LSO,
           "        keep_sparse=getattr(self, \"_keep_sparse_gradients\", "
           "False)))\n",
           "        keep_sparse=getattr(self, \"_keep_sparse_gradients\", "
           "False)))\n"
           "    return list(zip(list(unscaled) + [None],\n"
           "                    [v for _, v in grads_vars]))\n",
           (_EAGER,), "the eager compiled unscale pairs gradients with the "
           "wrong variables when one is None"),
    # -- The flags the unscale computes, and the ops of the common step.
    Mutant("U01", _KF,
           "    if len(members) == group.size:",
           "    if members:",
           (_UNSCALE,), "a part of a group is decided by the whole group's "
           "flag"),
    Mutant("U02", _KF,
           "      flags.extend(group.flags[i] for i in sorted(members))",
           "      flags.extend(group.flags[0] for i in sorted(members))",
           (_UNSCALE,), "a part of a group takes the first tensor's flag"),
    Mutant("U03", _UN,
           "      others = iter(not_fused)",
           "      others = iter(not_fused)\n"
           "      known_flags.remember_finite(not_fused, all_flag)",
           (_UNSCALE,), "the XLA flag is remembered for the sparse gradients "
           "it did not check"),
    Mutant("U04", _SD,
           "        fast = tf.logical_and(fast, tf.abs(inverse) <= 1)",
           "        fast = tf.logical_and(fast, tf.abs(inverse) >= 0)",
           (_UNSCALE,), "the scaled gradients' total is trusted for a scale "
           "below 1, where the unscale can overflow"),
    Mutant("T01", _TFC,
           "  return str(getattr(graph, \"name\", \"\")).startswith("
           "\"wrapped_function\")",
           "  return False",
           (_UNSCALE,), "a wrap_function graph, which prune can feed, is "
           "taken for a tf.function's"),
    Mutant("L10", _LS,
           "    just_count = tf.logical_and(is_finite, good < "
           "incr_every_n_steps - 1)",
           "    just_count = tf.logical_and(is_finite, good < "
           "incr_every_n_steps)",
           (_LST,), "graph policy: the count runs on the step that grows"),
    Mutant("S03", _SD,
           "      parts.append(tf.stack(group))",
           "      parts.append(group[0])",
           (_SKIP,), "_small_parts keeps only the first of several scalar "
           "gradients"),
    Mutant("R01", _SR,
           '    "SparseAccumulatorTakeGradient",\n', "",
           (_WRAP,), "a sparse accumulator's take is not recognised"),
    Mutant("R02", _SR,
           "return bool(types) and all(t in _TAKE_GRADIENT_OPS for t in types)",
           "return bool(types) and any(t in _TAKE_GRADIENT_OPS for t in types)",
           (_WRAP,), "any gradient from an accumulator counts as an aggregate"),
    Mutant("S04", _SD,
           "  cannot_overflow = tf.less_equal(count * largest,",
           "  cannot_overflow = tf.less_equal(largest,",
           (_DUP,), "the duplicate-sum bound without its row count"),
    # -- skip_decision.py
    Mutant("S05", _SD,
           "    return [tf.math.real(values), tf.math.imag(values)]",
           "    return [tf.math.real(values)]",
           (_EAGER,), "a complex gradient is checked by its real part only"),
    Mutant("S06", _SD,
           "  return rows is None or rows > 1",
           "  return rows is None or rows > 2",
           (_DUP,), "off by one: two rows are taken as unable to repeat"),
    Mutant("S07", _SD,
           "  check = _true_unless(cannot_overflow,",
           "  check = _true_unless(tf.logical_not(cannot_overflow),",
           (_DUP,), "the bound's branches swapped"),
    Mutant("S08", _SD,
           "  sums = tf.math.unsorted_segment_sum(slices.values, positions,",
           "  sums = tf.math.unsorted_segment_max(slices.values, positions,",
           (_DUP,), "the exact check takes the per-index max, not the sum"),
    Mutant("S09", _SD,
           "    return tf.raw_ops.Merge(inputs=[if_true, false_value]).output",
           "    return tf.raw_ops.Merge(\n"
           "        inputs=[tf.logical_not(if_true), false_value]).output",
           (_SKIP,), "a finite total reads as non-finite (plain graphs)"),
    Mutant("S10", _SD,
           "      flags = [tf.reduce_all(tf.math.is_finite(p)) for p in parts]",
           "      flags = [tf.constant(False) for p in parts]",
           (_SKIP,), "an overflowing total of finite gradients is not "
           "checked exactly"),
    Mutant("S15", _SD,
           "      checks.append(tf.constant(True) if fast else exact())",
           "      checks.append(tf.constant(False) if fast else exact())",
           (_SKIP,), "a finite total reads as non-finite (eager)"),
    Mutant("S16", _SD,
           "        parts.extend(_small_parts([g for g, _ in pairs]))",
           "        pass",
           (_SKIP, _UNSCALE), "small gradients are left out of the exact "
           "check that a non-finite total runs"),
    Mutant("S17", _SD,
           "      terms.extend(_small_sums([s for _, s in pairs]))",
           "      pass",
           (_SKIP, _UNSCALE), "small gradients are left out of the total "
           "that a Switch is built for"),
    Mutant("S18", _SD,
           "    added = group[0] if len(group) == 1 else tf.add_n(group)",
           "    added = group[0]",
           (_SKIP,), "of small gradients of one shape, only the first "
           "joins the total"),
    Mutant("S19", _SD,
           "  return elements > _SMALL_GRAD_ELEMENTS",
           "  return elements >= 0",
           (_SKIP, "tests/op_count_test.py"), "a few small gradients alone "
           "are summed behind a Switch too"),
    Mutant("S20", _SD,
           "      total += float(np.sum(t.numpy(), dtype=np.float64))",
           "      total += 0.0",
           (_SKIP,), "eagerly, small gradients are left out of the total "
           "NumPy adds up"),
    Mutant("S21", _SD,
           "  return math.isfinite(total)",
           "  return not math.isnan(total)",
           (_SKIP,), "eagerly, an infinite total reads as finite"),
    Mutant("S11", _SD,
           "    if not (values.dtype.is_floating or values.dtype.is_complex):",
           "    if not values.dtype.is_floating:",
           (_EAGER,), "complex gradients are not checked at all"),
    Mutant("S12", _SD,
           "  return checks[0] if len(checks) == 1 else "
           "tf.reduce_all(tf.stack(checks))",
           "  return checks[0]",
           (_SKIP,), "only the first group's check decides"),
    Mutant("S13", _SD,
           "  if isinstance(grad, tf.IndexedSlices):\n    return grad.values",
           "  if isinstance(grad, tf.IndexedSlices):\n    return grad.indices",
           (_SKIP,), "an IndexedSlices is checked through its indices"),
    # -- replica_consensus.py
    Mutant("S14", _RC,
           "    return tf.greater_equal(finite_count, "
           "strategy.num_replicas_in_sync - 0.5)\n\n  return ctx.merge_call(",
           "    return tf.greater_equal(finite_count, "
           "strategy.num_replicas_in_sync - 1.5)\n\n  return ctx.merge_call(",
           ("tests/distribute_test.py",),
           "replica consensus lets one non-finite replica through"),
    # -- loss_scale.py
    Mutant("L02", _LS,
           "      return [good_steps.assign_add(1, read_value=False)]",
           "      return [good_steps.assign_add(2, read_value=False)]",
           (_POLICY,), "graph policy: the common step counts twice"),
    Mutant("L03", _LS,
           "      grow = tf.logical_and(is_finite, good_plus_one >= "
           "incr_every_n_steps)",
           "      grow = tf.logical_and(is_finite, good_plus_one > "
           "incr_every_n_steps)",
           (_LST,), "graph policy: grows one step late"),
    Mutant("L04", _LS,
           "      shrunk = tf.maximum(1.0, scale * decr_ratio)",
           "      shrunk = scale * decr_ratio",
           (_LSO_T + "::LossScaleOptimizerCheckpointTest::"
            "test_nan_storm_leaves_state_bit_identical_graph",),
           "graph policy: the scale may shrink below 1"),
    Mutant("L05", _LS,
           "          is_finite, tf.where(grow, zero, bad),",
           "          is_finite, zero,",
           # Equivalent: a finite step reaches the whole policy only when
           # it grows (any other finite step just counts), so `grow` is
           # True wherever `is_finite` is, and both give zero.
           (_POLICY,), "graph policy: a good step clears the bad count "
           "(equivalent)"),
    Mutant("L06", _LS,
           "    if good < incr_every_n_steps:\n",
           "    if good <= incr_every_n_steps:\n",
           (_LST,), "eager policy: grows one step late"),
    Mutant("L07", _LS,
           "    if np.isfinite(grown):\n      loss_scale.assign(grown",
           "    if True:\n      loss_scale.assign(grown",
           (_LST,),
           "eager policy: growth past float32 max makes the scale inf"),
    Mutant("L08", _LS,
           "    bad_steps.assign(0, read_value=False)\n"
           "  good_steps.assign(0, read_value=False)\n",
           "    bad_steps.assign(0, read_value=False)\n",
           (_POLICY,), "eager policy: a bad step keeps the good count"),
    Mutant("L09", _LS,
           "  with tf.control_dependencies([lock]):\n    writes = step()",
           "  with tf.control_dependencies([]):\n    writes = step()",
           (_THREADS,), "the update does not wait for its lock"),
    # -- loss_scale_optimizer.py
    Mutant("O02", _UN,
           "  inv_loss_scale = tf.math.reciprocal(loss_scale)\n",
           "  inv_loss_scale = tf.math.reciprocal(tf.cast(loss_scale, "
           "tf.float16))\n",
           (_ODD_SCALE,), "the reciprocal is taken in float16"),
    Mutant("O03", _LSO,
           "    skip, apply = tf.raw_ops.Switch(data=is_finite, "
           "pred=is_finite)",
           "    apply, skip = tf.raw_ops.Switch(data=is_finite, "
           "pred=is_finite)",
           (_APPLIED,), "graph skip: the Switch's outputs swapped"),
    Mutant("O04", _LSO,
           "      if not finite:\n        "
           "self._maybe_advance_global_step(global_step)",
           "      if finite:\n        "
           "self._maybe_advance_global_step(global_step)",
           (_LSO_T + "::LossScaleOptimizerApiTest",),
           "eager: advance_global_step_on_skip advances on applied steps"),
    Mutant("O05", _LSO,
           "        advance_on_skip=self._advance_on_skip(grads_and_vars))",
           "        advance_on_skip=None)",
           (_WRAP,), "a skipped aggregate does not advance global_step"),
    Mutant("O06", _LSO,
           "            tf.cond(is_finite, tf.no_op,\n"
           "                    lambda: _as_op(_advance_global_step("
           "global_step)),",
           "            tf.cond(is_finite,\n"
           "                    lambda: _as_op(_advance_global_step("
           "global_step)), tf.no_op,",
           (_WRAP,), "graph: the skip's global_step advance on the wrong "
           "branch"),
    Mutant("O07", _UN,
           "  return loss * tf.cast(loss_scale, loss.dtype.base_dtype)\n",
           "  return loss\n",
           (_APPLIED,), "a graph loss tensor is not scaled"),
    Mutant("O11", _LSO,
           "        is_finite = tf.identity(is_finite)",
           "        pass",
           tuple("tests/unscale_function_hostile_test.py::WideScaleTest::"
                 "test_gradients_from_elsewhere_are_not_applied{}".format(i)
                 for i in range(5)),
           "a refused scale stops the update but not the apply of gradients "
           "that did not come from compute_gradients"),
    # -- step_scale.py (moved from loss_scale_optimizer.py by issue 41)
    Mutant("O08", _STEP,
           "    return tf.raw_ops.Snapshot(input=scale)",
           "    return scale",
           (_LSO_T + "::StepLossScaleTest",),
           "the step's scale is not copied: a ref read "
           "aliases the variable"),
    Mutant("O09", _STEP,
           "  with scale.graph.gradient_override_map("
           "{\"Snapshot\": \"Identity\"}):",
           "  if True:",
           (_LSO_T + "::LossScaleOptimizerGradientsTest",),
           "a trainable scale variable's copy stops minimize's gradients"),
    Mutant("O10", _STEP,
           "      condition=tf.logical_and(tf.equal(tf.size(scale), 1),\n"
           "                               tf.reduce_all(usable)),",
           "      condition=tf.constant(True),",
           (_REFUSED,), "a variable's unusable scale (0, NaN, a float32 "
           "subnormal) is used"),
    Mutant("O12", _STEP,
           "    static = tf.get_static_value(scale)",
           "    static = None",
           (_REFUSED,),
           "a constant unusable scale is checked only when the step runs, "
           "where Grappler folds the check's control edge away"),
    # -- Issue 41: mutants that change the numbers and not the op count
    # (or not by much), and the two bugs no test before the oracle saw.
    # TF 1.15's optimizer (tests/tf115_reference.py) judges each. Swapping
    # the operands of the unscale's multiply, or of the loss's, is not
    # listed: it is equivalent (a float multiply commutes to the bit, and
    # Grappler's arithmetic optimizer orders a tree of Muls by shape).
    Mutant("N01", _UN,
           "      inv_by_dtype[dtype] = tf.cast(inv_loss_scale, dtype)",
           "      inv_by_dtype[dtype] = tf.math.reciprocal("
           "tf.cast(loss_scale, dtype))",
           (_F64_ORACLE,), "the scale is cast to each gradient's dtype and "
           "its reciprocal taken there (a float64 gradient gets float64's "
           "1/3, not float32's)"),
    Mutant("N02", _UN,
           "    u = g * inv\n",
           "    u = g / tf.math.reciprocal(inv)\n",
           (_XLA_ORACLE,), "the XLA unscale divides by the scale instead of "
           "multiplying by its reciprocal"),
    Mutant("N03", _UN,
           "  grads = list(grads) if keep_sparse else densified(grads)",
           "  grads = list(grads)",
           _DENSE_UPDATE,
           "an IndexedSlices gradient stays sparse by default: the inner "
           "optimizer takes its sparse update"),
    Mutant("N04", _UN,
           "  inv_loss_scale = tf.math.reciprocal(loss_scale)\n",
           "  inv_loss_scale = tf.math.reciprocal(tf.cast(loss_scale, "
           "tf.float32))\n",
           (_WIDE_SCALE, _F64_ORACLE), "a float64 scale's reciprocal is "
           "taken in float32"),
    Mutant("N05", _UN,
           "    flags.append(tf.reduce_all(tf.math.is_finite(u)))",
           "    flags.append(tf.reduce_all(tf.math.is_finite(g)))",
           (_XLA_ORACLE,), "the XLA unscale's flag reads the scaled "
           "gradient: below a scale of 1, an unscaled -inf is applied"),
    Mutant("N06", _STEP,
           "  if narrow < _FLOAT32_TINY:",
           "  if narrow <= _FLOAT32_TINY:",
           (_USABLE,), "2**-126, the smallest normal float32, is refused "
           "as a scale known when the step is built"),
    Mutant("N07", _STEP,
           "tf.cast(narrow, tf.float64) >= _FLOAT32_TINY))",
           "tf.cast(narrow, tf.float64) > _FLOAT32_TINY))",
           (_USABLE,), "2**-126, the smallest normal float32, is refused "
           "as a variable's scale when the step runs"),
    Mutant("N08", _STEP,
           "  tensor = tf.convert_to_tensor(value)\n",
           "  tensor = tf.cast(tf.convert_to_tensor(value), tf.float32)\n",
           (_WIDE_SCALE, _F64_ORACLE), "a float64 scale is made float32 "
           "as it is read (the package before issue 41)"),
    # -- sync_replicas.py
    Mutant("R03", _SR,
           "  if isinstance(opt, tf.compat.v1.train.SyncReplicasOptimizer):",
           "  if False:",
           (_WRAP,), "LossScaleOptimizer(SyncReplicasOptimizer) accepted"),
    # -- Issue 52, items 8-11: plausible bugs of the step that no test saw.
    # Q04's test is a race under contention: with the mutant it failed 6
    # of 6 runs (tens of late reads each), never without it.
    Mutant("Q01", _STEP,
           "  return (get is adapter.get_loss_scale and\n"
           "          type(getattr(manager, \"loss_scale\", None)) in "
           "_BUILT_IN_LOSS_SCALES)",
           "  return get is adapter.get_loss_scale",
           (_USER_LOSS_SCALE,), "a user's own LossScale through "
           "from_loss_scale is never checked: a scale of 0 skips every step "
           "without a word"),
    Mutant("Q02", _STEP,
           "type(getattr(manager, \"loss_scale\", None)) in "
           "_BUILT_IN_LOSS_SCALES)",
           "isinstance(getattr(manager, \"loss_scale\", None),\n"
           "                     _BUILT_IN_LOSS_SCALES))",
           (_USER_LOSS_SCALE,), "a user's subclass of DynamicLossScale is "
           "taken for TF's own and not checked"),
    Mutant("Q03", _UN,
           "      result.append(tf.IndexedSlices(values, g.indices, "
           "g.dense_shape))",
           "      result.append(tf.IndexedSlices(values, g.indices))",
           ("tests/unscale_test.py::KeptSparseThroughUserCodeTest",),
           "a kept-sparse unscaled gradient loses its dense_shape: user "
           "code that makes it dense raises"),
    Mutant("Q04", _LSO,
           "    with tf.control_dependencies([loss_scale]):\n"
           "      update_op = ",
           "    with tf.control_dependencies([]):\n"
           "      update_op = ",
           (_LSO_T + "::StepLossScaleTest::test_loss_scale_fetched_with_the_"
            "train_op_under_contention",),
           "the manager's update does not wait for the step's read: "
           "opt.loss_scale fetched with the train op may be the next "
           "step's scale"),
    Mutant("Q05", _STEP,
           "shape[0] not in (None, 1)",
           "shape[0] != 1",
           ("tests/step_scale_test.py::UnknownLengthScaleTest",),
           "a scale of shape [None] (a scalar when it runs) is refused when "
           "the step is built"),
    # -- keras_loss_scale_optimizer.py: Keras 2's API under Keras 3 (issue 49)
    Mutant("K01", _KLSO,
           "    scaled = self.get_scaled_loss(loss)\n"
           "    self._cmp_scale_loss_calls.mark()\n",
           "    scaled = self.get_scaled_loss(loss)\n",
           (_K2API + "test_steps_match_keras2_fit",),
           "Keras 3's fit: apply never unscales the scaled gradients"),
    Mutant("K02", _KLSO,
           "      marked = threading.get_ident() in threads\n"
           "      threads.discard(threading.get_ident())\n",
           "      marked = threading.get_ident() in threads\n",
           (_K2API + "test_steps_match_keras2_fit_then_split",),
           "an apply does not take its step's scale_loss mark (it outlives "
           "the step)"),
    Mutant("K03", _KLSO,
           "    if not unscale and calls.pending_elsewhere():",
           "    if False:",
           (_K3STEP + "test_split_scale_loss_refuses",),
           "scaled gradients of another tf.function applied unscaled, "
           "silently"),
    Mutant("K04", _KLSO,
           "    graph = _tf_compat.step_graph()\n",
           "    graph = tf.compat.v1.get_default_graph()\n",
           (_K3STEP + "test_scale_loss_then_apply_in_a_branch",),
           "a cond branch is taken for another step than its function"),
    Mutant("K05", _KLSO,
           "    for key in (\"initial_loss_scale\", \"loss_scale_value\", "
           "\"init_loss_scale\"):",
           "    for key in (\"initial_loss_scale\", \"init_loss_scale\"):",
           (_K2API + "test_attributes_match_keras2_fixed",),
           "initial_scale of a fixed scale is None"),
    Mutant("K06", _KLSO,
           "      return _tf_compat.loss_scale_weight(source, \"good_steps\")",
           "      return None",
           (_K2API + "test_attributes_match_keras2_default",),
           "dynamic_counter is None for a dynamic scale"),
    Mutant("K07", _KLSO,
           "                     [v for _, v in grads_and_vars], "
           "unscale=False)",
           "                     [v for _, v in grads_and_vars], "
           "unscale=True)",
           (_K2API + "test_steps_match_keras2_minimize_tape",),
           "minimize unscales twice under Keras 3"),
    Mutant("K08", _KLSO,
           "    _tf_compat.checkpoint_keras3_wrapper_as_keras2(self, "
           "optimizer)\n",
           "",
           (_K2API + "test_checkpoints_cross_with_keras2",),
           "Keras 3's own _iterations and _learning_rate in checkpoints"),
    Mutant("K09", _KLSO,
           "    def skip_fn():\n      if advance:\n"
           "        iterations.assign_add(1)",
           "    def skip_fn():\n      if False:\n"
           "        iterations.assign_add(1)",
           (_K2API + "test_steps_match_keras2_function",),
           "a skipped step in a tf.function does not advance iterations"),
    Mutant("K10", _KLSO,
           "        \"_cmp_skips\": not isinstance(tf2_loss_scale, "
           "_FixedLossScale),",
           "        \"_cmp_skips\": True,",
           (_K2API + "test_steps_match_keras2_eager",),
           "a fixed scale skips non-finite steps (Keras 2's dynamic=False "
           "applied them)"),
    # -- _validation.py (reported apart from the score)
    Mutant("V01", _VAL,
           "  if not minimum <= value32 <= maximum:",
           "  if not minimum < value32 <= maximum:",
           ("tests/validation_test.py",), "the float minimum is exclusive"),
    Mutant("V02", _VAL,
           "  if int(value) < minimum or",
           "  if int(value) <= minimum or",
           ("tests/validation_test.py",), "the int minimum is exclusive"),
    # -- The upgrade command: issue 43's seven survivors (reported apart).
    Mutant("C01", _U_SIG,
           "    for other in STOP_SIGNALS:\n"
           "      signal.signal(other, signal.SIG_IGN)\n",
           "",
           (_U_EDGES + "test_second_ctrl_c_during_the_cleanup_is_ignored",),
           "a second Ctrl-C during the cleanup interrupts it"),
    Mutant("C02", _U_COMMIT,
           "            if empty:\n"
           "              os.mkdir(path)\n",
           "            pass\n",
           (_U_EDGES + "test_failed_rename_keeps_an_existing_empty_outtree",),
           "a failed rename removes the user's existing empty --outtree, "
           "and the message says nothing changed"),
    Mutant("C03", _U_COMMIT,
           "      self._remove_or_list(self._moves_into[0], os.rmdir)",
           "      pass",
           (_U_EDGES + "test_tree_built_inside_the_outtree_leaves_no_"
            "staging_directory",),
           "a successful run leaves its emptied staging directory inside "
           "--outtree"),
    Mutant("C04", _U_COMMIT,
           "      if item.is_dir(follow_symlinks=False):",
           "      if item.is_dir():",
           (_U_EDGES + "test_aborted_run_removes_a_staged_link_to_a_"
            "directory",),
           "an aborted run leaves its staging tree when the tree holds a "
           "link to a directory"),
    Mutant("C05", _U_CHECK,
           "  if \"could not be\" in why or \"cannot be followed\" in why:",
           "  if \"could not be\" in why:",
           ("tests/upgrade_check_test.py::CheckTest::test_a_link_that_cannot_"
            "be_followed_fails_the_check",),
           "--check exits 0 on a link it cannot follow"),
    Mutant("C06", _U_CLI,
           "    if finished:\n"
           "      return outcome  # It came too late: the output is "
           "complete.\n",
           "",
           (_U_EDGES + "test_ctrl_c_held_over_renames_that_all_succeed",),
           "a Ctrl-C held over renames that all succeed ends with exit 130 "
           "and \"nothing was written\" while the output is in place"),
    Mutant("C07", _U_WORKERS,
           "    if all(len(e.source) < _ALONE_BYTES for e in heavy):",
           "    if all(len(e.source) <= _ALONE_BYTES for e in heavy):",
           ("tests/upgrade_hostile_run_test.py::AloneBytesTest",),
           "a file of exactly 128 KiB is converted in the command's own "
           "process, not a worker"),
    Mutant("C08", _U_COMMIT,
           "        if path in self._expected:\n",
           "        if False:\n",
           ("tests/upgrade_hostile_run_test.py::EditedDuringTheRunTest",),
           "--inplace replaces a file the user edited while the run "
           "converted it (issue 43, item 13)"),
    # -- Issue 52: the upgrade command's seven survivors (items 1-7), its
    # fixes (items 12-13), and more plausible bugs of each module.
    Mutant("UC01", _U_COMMIT,
           "        if backup not in kept:\n"
           "          _remove(backup)\n",
           "        _remove(backup)\n",
           (_U_FINISH + "test_failed_undo_keeps_the_backup_it_names",),
           "a failed undo deletes the backup its message tells the user to "
           "restore from (item 1)"),
    Mutant("UC02", _U_COMMIT,
           "    for path in reversed(missing):",
           "    for path in missing:",
           (_U_NEW_DIRS + "test_two_new_directories_deep",),
           "the new directories above an output are made innermost first: "
           "exit 1 two levels deep (item 4)"),
    Mutant("UC03", _U_COMMIT,
           "        shutil.copystat(entry.path, target)",
           "        shutil.copymode(entry.path, target)",
           (_U_TIMES,), "--outtree copies unchanged .py files without "
           "their modification time (item 5)"),
    Mutant("UC04", _U_COMMIT,
           "                   lambda _, path=path: _rmdir(path))",
           "                   lambda _, path=path: None)",
           (_U_NEW_DIRS + "test_a_failed_run_removes_the_directories_it_"
            "made_outfile",),
           "a failed run leaves the new directories it made for the output"),
    Mutant("UC05", _U_COMMIT,
           "      if entry.changed:\n"
           "        shutil.copymode(entry.path, target)",
           "      if False:\n"
           "        shutil.copymode(entry.path, target)",
           (_U_TIMES,), "a converted file keeps the old modification time, "
           "so make does not rebuild it"),
    Mutant("UC06", _U_COMMIT,
           "      shutil.copy2(entry.path, target)",
           "      shutil.copyfile(entry.path, target)",
           (_U_TIMES,), "data files are copied without their time and mode"),
    Mutant("UC07", _U_COMMIT,
           "    for undo in reversed(self._undo):",
           "    for undo in self._undo:",
           (_U_NEW_DIRS + "test_a_failed_run_removes_the_directories_it_"
            "made_outfile",),
           "the abort removes directories before the files in them"),
    Mutant("UC08", _U_COMMIT,
           "          undo.append((lambda backup=backup, path=path: "
           "os.replace(\n              backup, path), path, backup))",
           "          undo.append((lambda: None, path, backup))",
           (_U_HOSTILE + "RenameFailsTest::test_nothing_changes_second_of_"
            "three_in_place",),
           "a failed rename does not put back the files renamed before it"),
    Mutant("UC09", _U_COMMIT,
           "    for backup in backups:\n"
           "      self._remove_or_list(backup, os.remove)\n",
           "",
           (_U_FINISH + "test_backup_not_removed_after_success",),
           "a successful --inplace run leaves a hidden backup beside each "
           "file"),
    Mutant("UC10", _U_COMMIT,
           "      if mode_from is not None:\n"
           "        shutil.copymode(mode_from, temp)",
           "      if False:\n"
           "        shutil.copymode(mode_from, temp)",
           (_U_MODES,), "--outfile of an executable script is not "
           "executable (0600)"),
    Mutant("UC11", _U_COMMIT,
           "      else:\n"
           "        os.chmod(temp, 0o666 & ~_umask())",
           "      else:\n"
           "        pass",
           (_U_MODES,), "the report is private (0600), not as the umask "
           "says"),
    Mutant("UC12", _U_COMMIT,
           "      os.chmod(stage, 0o777 & ~_umask())",
           "      pass",
           (_U_MODES,), "--outtree is private (0700), not as the umask "
           "says"),
    Mutant("UC13", _U_COMMIT,
           "        if f.read() == expected:",
           "        if True:",
           (_U_HOSTILE + "EditedDuringTheRunTest::test_an_edit_of_the_same_"
            "size_is_kept",),
           "--inplace replaces a file edited during the run when the edit "
           "kept its size"),
    Mutant("UW01", _U_WALK,
           " or\n          stat.S_ISDIR(target_stat.st_mode)):",
           "):",
           (_U_DIR_LINKS,), "--copyotherfiles false drops links to "
           "directories inside the tree, without a word (item 6)"),
    Mutant("UW02", _U_WALK,
           "      elif copy_other_files:",
           "      elif True:",
           (_U_DIR_LINKS,), "--copyotherfiles false copies data files"),
    Mutant("UW03", _U_WALK,
           "  if not _inside(real, root):",
           "  if False:",
           (_U_TREE + "test_link_leaving_the_tree_is_skipped_and_reported",),
           "a link that leaves the tree is recreated in the output"),
    Mutant("UW04", _U_WALK,
           "                             os.path.realpath(os.path.dirname("
           "path)))",
           "                             root)",
           (_U_TREE + "test_links_inside_the_tree_are_kept_and_never_"
            "followed",),
           "a link in a subdirectory is made relative to the tree's root"),
    Mutant("UW05", _U_WALK,
           "    if e.errno == errno.ELOOP:",
           "    if False:",
           (_U_TREE + "test_dangling_link_and_link_loops_are_skipped_and_"
            "reported",),
           "a link loop is reported as a link that cannot be followed"),
    Mutant("UW06", _U_WALK,
           "  plan.entries.append(entry)\n"
           "  _settle_notebooks(plan.entries)",
           "  plan.entries.append(entry)",
           (_U_CELLS + "test_magic_use_left_unconverted_is_warned_found_and_"
            "blocks",),
           "--infile NB.ipynb drops the warnings about its IPython lines"),
    Mutant("UK01", _U_WORKERS,
           "      finish(heavy[i], result)",
           "      finish(heavy[0], result)",
           ("tests/upgrade_tree_test.py::WorkSplitTest::test_worker_"
            "processes_give_the_serial_result",),
           "the workers' results go to the wrong files"),
    Mutant("UK03", _U_WORKERS,
           "  signal.signal(signal.SIGINT, signal.SIG_IGN)  # Drops a Ctrl-C "
           "it held.\n",
           "",
           ("tests/upgrade_interrupt_test.py::WorkerDiesTest::test_a_ctrl_c_"
            "to_the_workers_alone_is_left_to_the_command",),
           "a Ctrl-C kills the workers (of KeyboardInterrupt), not the "
           "command, which decides"),
    Mutant("UK04", _U_WORKERS,
           "        except (EOFError, OSError):  # It died before it sent its "
           "file back.\n"
           "          self._died(process, busy, queue, names, sources)",
           "        except (EOFError, OSError):  # It died before it sent its "
           "file back.\n"
           "          continue",
           ("tests/upgrade_interrupt_test.py::WorkerDiesTest",),
           "a worker killed from outside hangs the run"),
    Mutant("US01", _U_SIG,
           "    for signum, handler in previous.items():\n"
           "      signal.signal(signum, handler)\n",
           "    pass\n",
           (_U_PROGRAM + "test_main_restores_the_programs_handlers_finished",
            _U_PROGRAM + "test_main_restores_the_programs_handlers_"
            "interrupted"),
           "main() in a program leaves its Ctrl-C handler installed "
           "(item 2)"),
    Mutant("US02", _U_SIG,
           "    signal.pthread_sigmask(signal.SIG_SETMASK, previous)",
           "    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)",
           (_U_PROGRAM + "test_run_keeps_the_callers_blocked_sigterm_"
            "blocked",),
           "run() unblocks a SIGTERM its caller had blocked (item 3)"),
    Mutant("US03", _U_SIG,
           "  previous = signal.pthread_sigmask(signal.SIG_BLOCK, "
           "STOP_SIGNALS)",
           "  previous = signal.pthread_sigmask(signal.SIG_BLOCK, [])",
           (_U_EDGES + "test_ctrl_c_held_over_renames_that_all_succeed",),
           "a Ctrl-C during the renames cuts them in half"),
    Mutant("US04", _U_SIG,
           "                     (\"SIGINT\", \"SIGTERM\", \"SIGHUP\")",
           "                     (\"SIGINT\", \"SIGTERM\")",
           (_U_INTERRUPT + "test_signal_while_converting_sighup",),
           "a closed terminal (SIGHUP) kills the command without its "
           "cleanup"),
    Mutant("US05", _U_SIG,
           "  previous = {signum: signal.signal(signum, stop)\n"
           "              for signum in STOP_SIGNALS}",
           "  previous = {signum: signal.signal(signum, stop)\n"
           "              for signum in STOP_SIGNALS}\n"
           "  previous = {signum: signal.SIG_DFL for signum in previous}",
           (_U_PROGRAM + "test_main_restores_the_programs_handlers_"
            "finished",),
           "main() puts back Python's default handlers, not the "
           "program's own"),
    Mutant("UN01", _U_NOTEBOOK,
           "  return language is None or _PYTHON_LANGUAGE.fullmatch(\n"
           "      language.strip().lower()) is not None",
           "  return language is None or language.lower() == \"python\"",
           (_U_CELLS + "test_a_python3_kernel_language_is_python",),
           "a \"python3\" kernel's notebook is skipped yet counted as "
           "ready (item 12)"),
    Mutant("UN02", _U_NOTEBOOK,
           "  if not python and any(",
           "  if False and any(",
           (_U_CELLS + "test_a_use_in_another_languages_notebook_is_not_"
            "ready",),
           "an R notebook that uses the API is counted as ready"),
    Mutant("UN03", _U_NOTEBOOK,
           "    texts[i] = texts[i].replace(\"\\r\", \"\\n\")",
           "    pass",
           (_U_CR,), "a cell in CR line ends makes the notebook NOT "
           "CONVERTED (item 13)"),
    Mutant("UN04", _U_NOTEBOOK,
           "      new = new.replace(\"\\n\", \"\\r\")",
           "      pass",
           (_U_CR,), "a converted CR cell gets LF line ends"),
    Mutant("UN05", _U_NOTEBOOK,
           "          \"\\r\" if index in notebook.cr_cells else "
           "\"\\n\")",
           "          \"\\n\")",
           (_U_CR,), "a converted CR cell in list form becomes one item"),
    Mutant("UN06", _U_NOTEBOOK,
           "  if lone is not None:",
           "  if False:",
           (_U_CELLS + "test_cell_with_mixed_line_ends_is_named",),
           "a cell mixing lone CRs with LFs is NOT CONVERTED without its "
           "cell named"),
    Mutant("UN07", _U_NOTEBOOK,
           "    insert((changed or python)[0], before)",
           "    insert(python[0], before)",
           (_U_CELLS + "test_import_never_lands_above_a_cell_magic",),
           "the added import goes into the first Python cell, not the "
           "first one converted"),
    Mutant("UN08", _U_NOTEBOOK,
           "_PYTHON_CELL_MAGICS = frozenset((\"time\", \"timeit\", "
           "\"capture\", \"prun\",",
           "_PYTHON_CELL_MAGICS = frozenset((\"timeit\", "
           "\"capture\", \"prun\",",
           (_U_CELLS + "test_import_never_lands_above_a_cell_magic",),
           "a %%time cell is not converted"),
    Mutant("UB01", _U_BLOCKERS,
           "_V1_SHAPE_CALLS = frozenset((\"disable_v2_behavior\", "
           "\"disable_v2_tensorshape\"))",
           "_V1_SHAPE_CALLS = frozenset((\"disable_v2_behavior\",))",
           (_U_V1_SHAPES + "test_the_script_that_calls_it",),
           "a script that calls disable_v2_tensorshape() still gets the "
           "Dimension blocker (item 7)"),
    Mutant("UB02", _U_BLOCKERS,
           "  return any(call in source for call in (b\"disable_v2_behavior\","
           "\n                                         "
           "b\"disable_v2_tensorshape\"))",
           "  return b\"disable_v2_behavior\" in source",
           (_U_V1_SHAPES + "test_the_modules_of_a_script_that_calls_it",),
           "the modules of a script that calls disable_v2_tensorshape() "
           "still get the Dimension blocker (item 7)"),
    # -- This round's TF 2.x converter (issue 52, done-means 3).
    Mutant("UT01", _U_TF2X,
           "KERAS2_INITIAL = \"2 ** 15\"",
           "KERAS2_INITIAL = \"2 ** 16\"",
           (_T_K2 + "test_converts_defaults",
            _T_K2_LOOPS),
           "Keras 2's default initial scale written as 2 ** 16"),
    Mutant("UT02", _U_TF2X,
           "KERAS2_GROWTH = \"2000\"",
           "KERAS2_GROWTH = \"1000\"",
           (_T_K2 + "test_converts_defaults",
            _T_K2_LOOPS),
           "Keras 2's default growth steps written as 1000"),
    Mutant("UT03", _U_TF2X,
           "            \"multiplier=2.)\".format(tf, initial, growth))",
           "            \"multiplier=4.)\".format(tf, initial, growth))",
           (_T_K2 + "test_converts_keywords",
            _T_K2_LOOPS),
           "a Keras 2 dynamic scale grows and shrinks by 4, not 2"),
    Mutant("UT04", _U_TF2X,
           "    return _wrapped(package, text(\"inner_optimizer\", None), "
           "scale, True)",
           "    return _wrapped(package, text(\"inner_optimizer\", None), "
           "scale, False)",
           (_T_K2 + "test_converts_keywords",
            _T_K2_LOOPS),
           "a converted Keras 2 optimizer's skipped steps do not advance "
           "`iterations`"),
    Mutant("UT05", _U_TF2X,
           "  def rewrite(updated: cst.Call, dynamic=value) -> "
           "cst.BaseExpression:",
           "  def rewrite(updated: cst.Call, dynamic=True) -> "
           "cst.BaseExpression:",
           (_T_K2 + "test_converts_fixed",
            _T_K2_LOOPS),
           "`dynamic=False` is mapped to a dynamic scale"),
    Mutant("UT06", _U_TF2X,
           "_KERAS2_LSO_ARGS = (\"inner_optimizer\", \"dynamic\", "
           "\"initial_scale\",\n"
           "                    \"dynamic_growth_steps\")",
           "_KERAS2_LSO_ARGS = (\"inner_optimizer\", \"dynamic\", "
           "\"dynamic_growth_steps\",\n"
           "                    \"initial_scale\")",
           (_T_K2 + "test_converts_positional",
            _T_K2_LOOPS),
           "positional `initial_scale` and `dynamic_growth_steps` swapped"),
    Mutant("UT07", _U_TF2X,
           "      _keras2_lso(analysis, node, call, calls, found, "
           "package_name,\n"
           "                  display(k))\n"
           "      return",
           "      return",
           (_T_K2 + "test_every_import_style_from_class", _T_K2_LOOPS),
           "`from tensorflow.keras.mixed_precision import LossScaleOptimizer`"
           " is left for Keras 3"),
    Mutant("UT08", _U_TF2X,
           "  if extra or args[\"inner_optimizer\"] is None:",
           "  if args[\"inner_optimizer\"] is None:",
           (_T_K2 + "test_left_and_named_under_before_you_run_it_"
            "unknown_keyword",),
           "an argument Keras 2's class does not take is dropped, not "
           "stopped at"),
    Mutant("UT09", _U_TF2X,
           "  if not value and (args[\"initial_scale\"] is None or\n"
           "                    args[\"dynamic_growth_steps\"] is not None):",
           "  if not value and args[\"initial_scale\"] is None:",
           (_T_K2 + "test_left_and_named_under_before_you_run_it_"
            "fixed_with_growth_steps",),
           "`dynamic=False` with `dynamic_growth_steps` (which Keras 2 "
           "refused) becomes a fixed scale"),
    Mutant("UT10", _U_TF2X,
           "    if isinstance(node, cst.Attribute) and node.attr.value in "
           "_KERAS2_ONLY:\n"
           "      return True",
           "    if isinstance(node, cst.Attribute) and node.attr.value in "
           "_KERAS2_ONLY:\n"
           "      continue",
           (_T_K2 + "test_standalone_keras_2_told_by_what_only_keras_2_has_"
            "get_scaled_loss",),
           "a standalone-keras file that calls `get_scaled_loss` is taken "
           "for Keras 3 code"),
    Mutant("UT11", _U_TF2X,
           "  advance = not policy.experimental or getattr(found, "
           "\"advance\", False)",
           "  advance = getattr(found, \"advance\", False)",
           (_T_COMPILE + "test_keras2_compile_is_wrapped_with_keras2_numbers",
            _T_K2_RUN + "test_compile_under_a_mixed_float16_policy"),
           "Keras 2's `compile` wrapper no longer counts skipped steps in "
           "`iterations`"),
    Mutant("UT12", _U_TF2X,
           "      else:\n"
           "        scale_text = scale\n",
           "      else:\n"
           "        scale_text = _keras2_scale(tf, True, KERAS2_INITIAL,\n"
           "                                   KERAS2_GROWTH)\n",
           (_T_COMPILE + "test_tf20_policy_loss_scale_goes_to_compile",
            _T_K2_RUN + "test_tf20_policy_loss_scale_multiplier_4_in_fit"),
           "`compile` under a TF 2.0 Policy gets Keras 2's default scale "
           "(multiplier 2), not the Policy's own (multiplier 4)"),
    Mutant("UT13", _U_TF2X,
           "        scale_text = \"1\"",
           "        scale_text = None",
           (_T_COMPILE + "test_tf20_policy_without_loss_scaling_compiles_with_"
            "scale_1",),
           "a Policy's `loss_scale=None` (no scaling) becomes a dynamic "
           "scale in `compile`"),
    Mutant("UT14", _U_TF2X,
           "      text = \"({0}.variable_dtype != {0}.compute_dtype)\".format(",
           "      text = \"({0}.variable_dtype == {0}.compute_dtype)\".format(",
           (_T_COMPILE + "test_policy_reads",
            _T_K2_RUN + "test_tf20_policy_loss_scale_multiplier_4_in_fit"),
           "`should_cast_variables` inverted"),
    Mutant("UT15", _U_TF2X,
           "  found.lost.append((line, LOST_POLICY, FIX_POLICY))\n"
           "  found.notes.append((line, (\n"
           "      \"`loss_scale={}` was dropped",
           "  found.notes.append((line, (\n"
           "      \"`loss_scale={}` was dropped",
           (_T_NAMES + "Tf2xNamesTest::test_policy_loss_scale_is_reported",),
           "a Policy's dropped `loss_scale` has no NOT KEPT line"),
    Mutant("UT16", _U_TF2X,
           "  if wrapped_any:\n"
           "    # The loss scale the policy gave `compile` is kept there.\n"
           "    found.lost = [",
           "  if False:\n"
           "    found.lost = [",
           (_T_COMPILE + "test_tf20_policy_loss_scale_goes_to_compile",),
           "a Policy's loss scale that `compile` now gets is still NOT KEPT"),
    Mutant("UT17", _U_REPORT,
           "  clear = sum(1 for e in readable\n"
           "              if not e.blockers and not e.result.tf2x_stops)",
           "  clear = sum(1 for e in readable if not e.blockers)",
           (_T_K2 + "test_report_never_says_a_stopped_file_will_run",),
           "a file with a line the command could not convert counts as "
           "\"will run\""),
    Mutant("UT18", _U_REPORT,
           "  for line, what, fix in result.tf2x_lost:\n"
           "    out.append(\"  {}: NOT KEPT: {}. Fix: {}.\".format("
           "entry.at(line), what,\n"
           "                                                     fix))\n",
           "",
           (_T_NAMES + "Tf2xNamesTest::test_report_names_what_was_not_"
            "kept_under_its_file",),
           "a converted file's NOT KEPT lines are lost from its block"),
    Mutant("UT19", _U_CHECK,
           "    found.append(Finding(path, cell, line, 1, \"{}: {}\".format("
           "what, fix)))",
           "    pass",
           (_T_K2 + "test_report_never_says_a_stopped_file_will_run",),
           "`--check` says nothing of a Keras 2 line it could not convert"),
    Mutant("UT20", _U_PINS,
           "    if self.low is not None and self.low >= (2, 3):",
           "    if self.low is not None and self.low > (2, 3):",
           (_T_LATER + "dockerfile_pip",),
           "a pin of TF 2.3 itself is not taken for TF 2.3's rule"),
    Mutant("UT21", _U_PINS,
           "    if self.high is not None and self.high <= (2, 2):",
           "    if self.high is not None and self.high < (2, 2):",
           (_T_PINS + "test_a_pin_of_tf_2_2_or_earlier_does_not_exact",),
           "a pin of TF 2.2 itself is not taken for TF 2.0-2.2's rule"),
    Mutant("UT22", _U_PINS,
           "  if lower.endswith(\".txt\") and (\"requirements\" in lower or",
           "  if lower.endswith(\".txt\") and (lower.startswith("
           "\"requirements\") or",
           (_T_LATER + "requirements_prefixed",),
           "`dev-requirements.txt`-style files are not read"),
    Mutant("UT23", _U_PINS,
           "        lower_high((major, minor - 1) if minor else "
           "(major - 1, 99))",
           "        lower_high((major, minor))",
           (_T_PINS + "test_a_pin_of_tf_2_2_or_earlier_does_not_below",),
           "`tensorflow<2.3` is taken to allow TF 2.3"),
    Mutant("UT24", _U_PINS,
           "    return rules.pop() if len(rules) == 1 else None",
           "    return rules.pop() if rules else None",
           (_T_PINS + "test_pins_that_allow_both_rules_keep_the_default_and_"
            "say_so_disagree",),
           "pins that disagree choose one rule silently"),
    Mutant("UT25", _U_CLI,
           "  advance = pin.advance is True",
           "  advance = pin.advance is not False",
           ("tests/upgrade_tf2x_test.py::ConvertedTf2xProgramsTest::"
            "test_report_says_what_each_became_and_what_was_not_kept",),
           "an unpinned tree gets TF 2.3's `iterations` rule"),
    Mutant("UT26", _U_REPORT,
           "    elif blocker.what == blockers.OPTIMIZER_V2_SUBCLASS:",
           "    elif False:",
           ("tests/upgrade_blockers_test.py::OptimizerV2SubclassTest::"
            "test_report_counts_it_as_needing_keras_2", _T_KERAS2_TREE),
           "a subclass of a Keras optimizer is not counted as needing "
           "Keras 2"),
    Mutant("UT27", _U_KERAS2,
           "              len(item.args.args) == 2):",
           "              len(item.args.args) == 1):",
           ("tests/keras2_test.py::Keras2Test::test_a_build_that_reads_a_"
            "tensor_shape", _T_KERAS2_TREE),
           "a layer's `build(self, input_shape)` is not read (`self` "
           "forgotten in the count)"),
    Mutant("UT28", _U_TF2X,
           "    elif kind in (LSO, TODAY_LSO) and _wraps_v1(analysis, call):",
           "    elif kind in (LSO, TODAY_LSO) and False:",
           (_T_KIND + "test_a_tf1_optimizer_gets_tfs_v1_loss_scale_"
            "optimizer_attribute", _T_V1_IN_KERAS),
           "a Keras LossScaleOptimizer given a tf.compat.v1 optimizer "
           "becomes KerasLossScaleOptimizer, which refuses it"),
    Mutant("UT29", _U_TF2X,
           "    _set_call(calls, call, _renamed_keyword(\"optimizer\", "
           "\"opt\"), name)",
           "    pass",
           (_T_KIND + "test_a_tf1_optimizer_gets_tfs_v1_loss_scale_"
            "optimizer_keyword",),
           "`optimizer=` kept for TF's MixedPrecisionLossScaleOptimizer, "
           "whose argument is `opt`"),
    Mutant("UT30", _U_TF2X,
           "  found.advance = advance_iterations",
           "  found.advance = False",
           (_T_NAMES + "IterationsRuleTest::test_a_tf_2_3_pin_advances_"
            "iterations_lso", _T_PINNED_RUN),
           "a tree pinned to TF 2.3+ still gets TF 2.0's `iterations` "
           "rule"),
    Mutant("UT31", _U_REPORT,
           "  if pin is not None and any(\"`iterations`\" in text for e in "
           "python",
           "  if pin is not None and False and any(\"`iterations`\" in text "
           "for e in python",
           (_T_PINNED_RUN + "::test_report_names_the_file_read_and_the_rule",),
           "the report does not say which pin chose the `iterations` rule"),
)


def check_mutants(root=_REPO):
  """Problems with `MUTANTS` against the modules under `root`; [] if none."""
  problems = []
  seen = set()
  for m in MUTANTS:
    if m.id in seen:
      problems.append("{}: duplicate id".format(m.id))
    seen.add(m.id)
    with open(os.path.join(root, m.file)) as f:
      count = f.read().count(m.old)
    if count != 1:
      problems.append("{}: its snippet occurs {} times in {} (need 1)".format(
          m.id, count, m.file))
    if m.old == m.new:
      problems.append("{}: the mutant changes nothing".format(m.id))
    for test in m.tests:
      path = test.split("::")[0]
      if not os.path.exists(os.path.join(root, path)):
        problems.append("{}: no test file {}".format(m.id, path))
  return problems


def _copy_repo(dest):
  """Copies the working tree (without .git and caches) into `dest`."""
  shutil.copytree(_REPO, dest, ignore=shutil.ignore_patterns(
      ".git", "__pycache__", "*.pyc", ".nox", "bazel-*", "*.egg-info",
      "build", "dist"))


def _run_tests(python, root, tests, timeout):
  """Runs `tests` in `root`; returns ('passed'|'failed'|'timeout', tail)."""
  env = dict(os.environ)
  env["PYTHONPATH"] = os.pathsep.join([root, os.path.join(root, "tests")])
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  cmd = [python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
  cmd += list(tests)
  try:
    proc = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout,
                          check=False)
  except subprocess.TimeoutExpired:
    return "timeout", ""
  lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
  tail = lines[-1] if lines else ""
  if proc.returncode == 0:
    return "passed", tail
  # 1: tests failed; 2: collection failed (a mutant that breaks an import
  # is noticed too). Name the test that failed (`-q` lists it).
  if proc.returncode in (1, 2):
    failed = [l.split(" - ")[0].split(" ", 1)[1] for l in lines
              if l.startswith(("FAILED ", "ERROR "))]
    return "failed", "{}; {}".format(tail, failed[0]) if failed else tail
  raise RuntimeError("pytest could not run {} (exit {}): {}".format(
      tests, proc.returncode, proc.stdout.decode("utf-8", "replace")[-2000:]))


def main(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.splitlines()[0],
      formatter_class=argparse.RawDescriptionHelpFormatter,
      epilog="\n".join(__doc__.splitlines()[2:]))
  parser.add_argument("--python", default=_DEFAULT_PYTHON,
                      help="the interpreter with TensorFlow and pytest "
                      "(default: the tf221 test venv)")
  parser.add_argument("--only", default="",
                      help="comma-separated mutant ids (default: all)")
  parser.add_argument("--list", action="store_true",
                      help="list the mutants and exit")
  parser.add_argument("--timeout", type=float, default=300,
                      help="seconds per mutant's tests; a timeout kills it")
  parser.add_argument("--skip-baseline", action="store_true",
                      help="do not first check that the tests pass "
                      "unmutated")
  args = parser.parse_args(argv)

  problems = check_mutants()
  if problems:
    print("The mutant list does not match the modules:\n  " +
          "\n  ".join(problems), file=sys.stderr)
    return 2
  mutants = list(MUTANTS)
  if args.only:
    wanted = set(args.only.split(","))
    unknown = wanted - {m.id for m in mutants}
    if unknown:
      print("Unknown mutant ids: {}".format(", ".join(sorted(unknown))),
            file=sys.stderr)
      return 2
    mutants = [m for m in mutants if m.id in wanted]
  if args.list:
    for m in mutants:
      print("{}  {:45s} {}  [{}]".format(m.id, m.file, m.what,
                                         ", ".join(m.tests)))
    return 0
  if not os.path.exists(args.python):
    print("No interpreter at {}: pass --python.".format(args.python),
          file=sys.stderr)
    return 2

  with tempfile.TemporaryDirectory(prefix="cmp_mutants_") as tmp:
    root = os.path.join(tmp, "repo")
    _copy_repo(root)
    if not args.skip_baseline:
      tests = sorted({t for m in mutants for t in m.tests})
      outcome, tail = _run_tests(args.python, root, tests, 4 * args.timeout)
      if outcome != "passed":
        print("Baseline: the tests fail without any mutant ({}): {}".format(
            outcome, tail), file=sys.stderr)
        return 2
      print("baseline: {}".format(tail), flush=True)
    results = []
    for m in mutants:
      path = os.path.join(root, m.file)
      with open(path) as f:
        original = f.read()
      with open(path, "w") as f:
        f.write(original.replace(m.old, m.new, 1))
      start = time.monotonic()
      try:
        outcome, tail = _run_tests(args.python, root, m.tests, args.timeout)
      finally:
        with open(path, "w") as f:
          f.write(original)
      status = "survived" if outcome == "passed" else "killed"
      results.append((m, status))
      print("{} {:8s} {:5.0f}s  {}: {}  ({})".format(
          m.id, status, time.monotonic() - start, m.file.split("/")[-1],
          m.what, tail if outcome != "timeout" else "timed out"), flush=True)

  scored = [(m, s) for m, s in results if m.file in SCORED]
  killed = sum(s == "killed" for _, s in scored)
  print()
  if scored:
    print("score over {}: {} of {} killed ({:.0f}%)".format(
        ", ".join(f.split("/")[-1] for f in SCORED), killed, len(scored),
        100.0 * killed / len(scored)))
  other = [(m, s) for m, s in results if m.file not in SCORED]
  if other:
    print("other modules: {} of {} killed".format(
        sum(s == "killed" for _, s in other), len(other)))
  survivors = [m for m, s in results if s == "survived"]
  for m in survivors:
    print("survivor {} ({}): {}".format(m.id, m.file, m.what))
  return 0


if __name__ == "__main__":
  sys.exit(main())

"""Synthetic "slices": a few finite batches, then corrupted ones."""
import numpy as np

INF, NAN = float("inf"), float("nan")
SLICES = ([[.25, .5], [.125, .25], [INF, .25], [.25, .25], [NAN, .25]]
          + [[INF, .25]] * 8 + [[NAN, .25]] * 8
          + [[.25, .5], [.125, .125], [.25, .25]])


def load():
    x = np.array(SLICES, np.float32)
    return x, np.full((len(x), 1), .5, np.float32)

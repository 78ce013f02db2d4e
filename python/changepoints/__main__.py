"""Change points of benchmark series with ruptures' PELT: JSON series on stdin, JSON breaks on stdout.

pbh (packages/core/src/history/detect.ts) sends {"series": [{"id", "values", "floor"}], "penalty_factor", "min_size"}
and reads back {"library", "method", "series": [{"id", "breaks", "sigma", "penalty"}]}. A break b means the level
changes between values[b - 1] and values[b]. Exit 2 is input this script refuses (the message on stderr says why).
"""

import json
import math
import sys

import numpy as np
import ruptures


def noise_sigma(values: np.ndarray, floor: float) -> float:
    """The point-to-point noise, from the median absolute deviation of first differences (steps are outliers there)."""
    if len(values) < 3:
        return max(floor, 0.0)
    diffs = np.diff(values)
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    # 1.4826 turns a MAD into a normal standard deviation; a difference of two points has twice a point's variance.
    sigma = 1.4826 * mad / math.sqrt(2.0)
    # Equal neighbours (quantised figures) give a MAD of 0: the caller's floor (the points' own standard errors) then holds.
    return max(sigma, floor, 1e-12 * max(abs(float(np.mean(values))), 1.0))


def breaks_of(values: list[float], floor: float, penalty_factor: float, min_size: int) -> dict:
    y = np.asarray(values, dtype=float)
    n = len(y)
    sigma = noise_sigma(y, floor)
    # BIC's penalty for one more change in mean is 2 sigma^2 ln n in squared-error units; penalty_factor scales it.
    penalty = penalty_factor * sigma * sigma * math.log(max(n, 2))
    if n < 2 * min_size:
        return {"breaks": [], "sigma": sigma, "penalty": penalty}
    found = ruptures.Pelt(model="l2", min_size=min_size, jump=1).fit(y.reshape(-1, 1)).predict(pen=penalty)
    # ruptures ends the list with n itself, the end of the last segment.
    return {"breaks": [int(b) for b in found if b < n], "sigma": sigma, "penalty": penalty}


def main() -> int:
    try:
        request = json.load(sys.stdin)
        series = request["series"]
        penalty_factor = float(request["penalty_factor"])
        min_size = int(request["min_size"])
    except (ValueError, KeyError, TypeError) as error:
        print(f"changepoints: the request on stdin is not the JSON pbh sends ({error!r})", file=sys.stderr)
        return 2
    out = []
    for entry in series:
        values = entry["values"]
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            print(f"changepoints: series {entry['id']!r} has a value that is not a finite number", file=sys.stderr)
            return 2
        out.append({"id": entry["id"], **breaks_of(values, float(entry.get("floor", 0.0)), penalty_factor, min_size)})
    json.dump({"library": f"ruptures {ruptures.__version__.lstrip('v')}", "method": "PELT, l2 cost", "series": out}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

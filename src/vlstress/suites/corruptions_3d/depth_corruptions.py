"""The depth-aware corruptions of 3D Common Corruptions (Kar et al., CVPR 2022), on the CPU.

Written from the formulas of the original's create_3dcc/create_fog.py and create_dof.py (which run
on a GPU in torch); a test holds these functions equal to a transcription of the torch code.
Images are float HxWx3 in [0, 1], depths float HxW in the encoding's units (`depth.py`), both
float64 here (the original: float32).

fog_3d      t = exp(-alpha * depth), alpha = 4, 8, 12, 16, 20 at severities 1..5;
            fog = t * rgb + mean(rgb) * (1 - t): the atmosphere is the image's mean (one value over
            every pixel and channel, as the original with one image per batch).
near_focus  a thin lens focused at the nearest depth quantile, far_focus at the 7th of 8:
far_focus   the depth split at its 9 quantiles 0, 1/8, ..., 1 (the first lowered, the last raised
            by 1e-4); each quantile q blurred with a Gaussian of radius aperture * |q - f| / q
            (circle of confusion without magnification, f the focus depth), aperture = severity + 2
            (far focus: 1.5 less); a pixel blends the blurs of the two quantiles around its depth
            with weights 1 - d^2 (d its distance to each, as a fraction of their gap), normalised.
            The Gaussian is separable, `int(3 * radius)` taps (made odd), the borders replicated;
            a radius under 0.1 leaves the image as it is.
"""

from __future__ import annotations

import numpy as np

FOG_ALPHAS = (4, 8, 12, 16, 20)  # create_fog.py, severities 1..5
N_QUANTILES = 8  # create_dof.py: the depth is split at N_QUANTILES + 1 quantiles
QUANTILE_EPS = 1e-4  # the first quantile lowered, the last raised by it
NEAR_INDEX, FAR_INDEX = 0, 7  # the quantile each focus is set at (sample_idxs_2, HARDCODED there)
FAR_APERTURE_REDUCTION = 1.5  # far focus: aperture - 1.5
CUTOFF_MULTIPLIER = 3  # taps of a blur: int(radius * 3), made odd
MIN_RADIUS = 0.1  # a smaller blur radius leaves the image unblurred


def fog_3d(rgb: np.ndarray, depth: np.ndarray, severity: int) -> np.ndarray:
    """Fog whose transmission falls with depth: exp(-alpha * depth) of the image, the rest the
    image's mean colour (a grey of its mean value)."""
    alpha = FOG_ALPHAS[severity - 1]
    t = np.exp(-alpha * depth)[..., None]
    return t * rgb + rgb.mean() * (1 - t)


def aperture(name: str, severity: int) -> float:
    """The aperture of `near_focus` (severity + 2) or `far_focus` (1.5 less)."""
    base = severity + 2.0
    return base - FAR_APERTURE_REDUCTION if name == "far_focus" else base


def depth_quantiles(depth: np.ndarray, n: int = N_QUANTILES, eps: float = QUANTILE_EPS):
    """The n + 1 quantiles 0, 1/n, ..., 1 of the depth (linear interpolation, as torch.quantile),
    the first lowered and the last raised by eps so that every depth lies strictly inside."""
    values = np.quantile(depth.reshape(-1), np.arange(n + 1) / n)
    values[0] -= eps
    values[-1] += eps
    return values


def circle_of_confusion(depths: np.ndarray, aperture: float, focus: float) -> np.ndarray:
    """Blur radius at each depth of a lens of `aperture` focused at `focus` (no magnification)."""
    return aperture * np.abs(depths - focus) / depths


def gaussian_taps(radius: float) -> np.ndarray:
    """The normalised 1-D Gaussian of a blur radius: std = radius, int(3 * radius) taps made odd."""
    taps = int(radius * CUTOFF_MULTIPLIER)
    if taps % 2 == 0:
        taps += 1
    n = np.arange(taps) - (taps - 1) / 2.0
    weights = np.exp(-(n**2) / (2 * radius * radius))
    return weights / weights.sum()


def separable_gaussian(rgb: np.ndarray, radius: float) -> np.ndarray:
    """The image blurred along rows then columns, borders replicated (create_dof.py's
    separable_gaussian); unchanged when radius < 0.1."""
    from scipy.ndimage import correlate1d

    if radius < MIN_RADIUS:
        return rgb
    taps = gaussian_taps(radius)
    # mode "nearest" extends the border pixel without end: torch's replicate padding of half the
    # taps, which is all the filter reaches
    rows = correlate1d(rgb, taps, axis=1, mode="nearest")
    return correlate1d(rows, taps, axis=0, mode="nearest")


def quantile_membership(depth: np.ndarray, quantiles: np.ndarray):
    """Each pixel's quantile below and above (left, right = left + 1) and its distances to them, as
    fractions of their gap (create_dof.py's compute_quantile_membership)."""
    right = np.searchsorted(quantiles, depth, side="left")
    left = right - 1
    gap = quantiles[right] - quantiles[left]
    return (depth - quantiles[left]) / gap, (quantiles[right] - depth) / gap, left, right


def refocus(rgb: np.ndarray, depth: np.ndarray, name: str, severity: int) -> np.ndarray:
    """`near_focus` or `far_focus` at `severity` of one image (create_dof.py's defocus_blur_3D for
    one copy)."""
    quantiles = depth_quantiles(depth)
    focus = quantiles[NEAR_INDEX if name == "near_focus" else FAR_INDEX]
    radii = circle_of_confusion(quantiles, aperture(name, severity), focus)
    if not np.isfinite(radii).all():
        raise ValueError(
            "a depth quantile is 0 (a blur radius divides by it): the depth map has too many zeros"
        )
    dist_left, dist_right, left, right = quantile_membership(depth, quantiles)
    weight_left, weight_right = 1 - dist_left**2, 1 - dist_right**2
    total = weight_left + weight_right
    weight_left, weight_right = weight_left / total, weight_right / total
    out = np.zeros_like(rgb)
    for index, radius in enumerate(radii):
        # a pixel takes the blurs of its two quantiles only: blur a quantile's radius only where
        # some pixel uses it
        uses_left, uses_right = left == index, right == index
        if not (uses_left.any() or uses_right.any()):
            continue
        blurred = separable_gaussian(rgb, float(radius))
        weight = np.where(uses_left, weight_left, 0.0) + np.where(uses_right, weight_right, 0.0)
        out += weight[..., None] * blurred
    return out


def corrupt(rgb: np.ndarray, depth: np.ndarray, name: str, severity: int) -> np.ndarray:
    """One depth-aware corruption of a float image in [0, 1] (HxWx3) with its depth (HxW)."""
    if name == "fog_3d":
        return fog_3d(rgb, depth, severity)
    if name in ("near_focus", "far_focus"):
        return refocus(rgb, depth, name, severity)
    raise ValueError(f"not a depth corruption: {name}")


def to_uint8(image: np.ndarray) -> np.ndarray:
    """As torchvision's ToPILImage of a float tensor, which the original saved with: x * 255
    truncated to an integer (not rounded)."""
    return np.clip(image * 255, 0, 255).astype(np.uint8)

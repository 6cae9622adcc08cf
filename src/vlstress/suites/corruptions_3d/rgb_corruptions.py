"""The corruptions of 3D Common Corruptions that need no depth (create_3dcc/create_non3d.py), on
uint8 HxWx3 images, with the original's constants and order of random draws.

iso_noise    Poisson noise (25 photons per unit) then Gaussian noise of std 0.7 x (0.08, 0.12,
             0.18, 0.26, 0.38) at severities 1..5, each clipped to [0, 1];
low_light    the range stretched to [0, c] with gamma 2, c = 0.6, 0.5, 0.4, 0.3, 0.2, then
             Poisson-Gaussian noise at the original's fixed severity 3 (120 photons, std 0.018);
color_quant  PIL's posterize to 6 - severity bits (deterministic).

The noises draw from numpy's legacy RandomState (poisson, then normal), as the original's
np.random calls, seeded per image by the caller: `rng` of the same seed gives the same bytes.
A constant image (max = min) stretched by low_light is taken as all dark (the original divides
by zero there).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageOps

ISO_GAUSS = (0.08, 0.12, 0.18, 0.26, 0.38)  # x 0.7 (iso_noise), x 0.1 (low_light's noise)
ISO_PHOTONS = 25
LOW_LIGHT_RANGE = (0.60, 0.50, 0.40, 0.30, 0.20)
LOW_LIGHT_NOISE_SEVERITY = 3  # low_light's Poisson-Gaussian noise, whatever its own severity
POISSON_PHOTONS = (60, 25, 12, 5, 3)  # x 10 (poisson_gaussian_noise)
RANDOM = ("iso_noise", "low_light")


def _noise(x: np.ndarray, photons: float, std: float, rng: np.random.RandomState) -> np.ndarray:
    """Poisson then Gaussian noise of a float image in [0, 255], as the original (uint8,
    truncated)."""
    x = np.asarray(x) / 255.0
    x = np.clip(rng.poisson(x * photons) / photons, 0, 1) * 255
    x = x / 255.0
    x = np.clip(x + rng.normal(size=x.shape, scale=std), 0, 1) * 255
    return x.astype(np.uint8)  # truncated, as np.uint8(x) there


def iso_noise(image: np.ndarray, severity: int, rng: np.random.RandomState) -> np.ndarray:
    return _noise(image, ISO_PHOTONS, 0.7 * ISO_GAUSS[severity - 1], rng)


def low_light(image: np.ndarray, severity: int, rng: np.random.RandomState) -> np.ndarray:
    x = np.asarray(image) / 255.0
    low, high = x.min(), x.max()
    unit = (x - low) / (high - low) if high > low else np.zeros_like(x)
    scaled = unit**2.0 * LOW_LIGHT_RANGE[severity - 1] * 255
    s = LOW_LIGHT_NOISE_SEVERITY - 1
    return _noise(scaled, 10 * POISSON_PHOTONS[s], 0.1 * ISO_GAUSS[s], rng)


def color_quant(image: np.ndarray, severity: int) -> np.ndarray:
    return np.asarray(ImageOps.posterize(Image.fromarray(image), 6 - severity))


def rng_of(seed: int) -> np.random.RandomState:
    """The legacy generator (the original's np.random functions) of one image's seed."""
    return np.random.RandomState(np.random.MT19937(np.random.SeedSequence(seed)))


def corrupt(image: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    """One of them on a uint8 HxWx3 image; `seed` the image's (every severity draws the same
    numbers: only the strength changes)."""
    if name == "iso_noise":
        return iso_noise(image, severity, rng_of(seed))
    if name == "low_light":
        return low_light(image, severity, rng_of(seed))
    if name == "color_quant":
        return color_quant(image, severity)
    raise ValueError(f"not an RGB corruption: {name}")

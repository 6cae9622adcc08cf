"""Image stress-tests: perturbed copies of the test images (mix, patch, flip, ...).

- `variants`: seeded partner permutation, CutMix boxes, the PERTURBATIONS registry, and the
  two modes (faithful: official-release files; clean: perturbing after the model's preprocessing).
  Their text-to-image metrics are `vlstress.metrics.stress_recalls`.
"""

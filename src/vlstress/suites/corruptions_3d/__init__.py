"""3D Common Corruptions (Kar et al., CVPR 2022): zero-shot classification under depth-aware
corruptions (docs/3d.md)."""

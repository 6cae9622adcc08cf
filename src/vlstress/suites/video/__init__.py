"""Robustness across time: pm-k accuracy on anchor frames and their neighbours
(ImageNet-Vid-Robust; docs/video.md)."""

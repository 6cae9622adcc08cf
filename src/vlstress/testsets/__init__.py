"""Labelled test sets: their kinds (ImageNet family, CIFAR, COCO objects, folders), label maps and
the labelled manifest that every classification suite reads."""

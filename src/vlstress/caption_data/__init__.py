"""Image-caption datasets: their kinds (`kinds.KINDS`: COCO folder, Karpathy split, demo) and the
canonical manifest (`manifest`) that retrieval and the RoCOCO suites read."""

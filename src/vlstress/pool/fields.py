"""The model attributes the papers group models by, in order: `pool.attributes` derives them,
records carry them, the summary has a column each."""

FIELDS = (
    "family",
    "tower",
    "params_image_m",
    "params_text_m",
    "resolution",
    "pretrain_data",
    "samples_seen_b",
    "loss",
    "finetune_method",
    "finetune_base",
)

"""The assistant suite's record task, its question formats and the display names of the kinds of
model it compares (constants: the table, figure and flags read them without the steps' code)."""

TASK = "multiple_choice"
KINDS = {"llava": "assistant", "open_clip": "CLIP", "timm": "supervised"}
# how a question is put and its answer read (vlstress.suites.assistant.answers): LLaVA's lettered
# multiple choice, or ImageNet-D's own question (the truth first, then the confusion) read as
# ImageNet-D scores it (`imagenet-d`) or strictly (`imagenet-d-strict`)
FORMATS = ("letters", "imagenet-d", "imagenet-d-strict")
IMAGENET_D_FORMS = ("imagenet-d", "imagenet-d-strict")

"""The assistant suite: does a language model on CLIP's vision encoder (LLaVA) fix CLIP's
failures? Multiple-choice questions among the true class and a classifier's top confusions."""

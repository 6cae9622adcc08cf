"""The papers' model pool as params (`vlstress pool`) and what the papers group models by (their
attributes: family, tower, size, resolution, pretraining data, loss, fine-tuning)."""

"""The embedding engine every suite shares: models (cards, weights), encoders, image batches, the
GPU half of the preprocess, embedding files and sets with reuse. It imports no suite."""

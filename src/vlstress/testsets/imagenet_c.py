"""ImageNet-C's fixed shape (Hendrycks & Dietterich 2019): its 15 corruptions in the paper's order,
its five severities, and the 224 px side its images are corrupted at. The corruptions suite makes
them; the zero-shot robustness summary scores them against AlexNet's published errors."""

IMAGENET_C = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
SEVERITIES = (1, 2, 3, 4, 5)
SIZE = 224  # Resize(256) + CenterCrop(224) before corrupting

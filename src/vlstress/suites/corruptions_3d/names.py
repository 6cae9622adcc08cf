"""The 12 corruptions of ImageNet-3DCC and what making one needs (pure data: the params check,
the flags and the pricing read it without NumPy).

`rgb+depth`: made here from an image and its depth (depth_corruptions.py);
`rgb`: made here from the image alone (rgb_corruptions.py: create_non3d.py's, seeded per image);
`release-only`: read from the released ImageNet-3DCC files only, since making them needs what this
package does not have: flash (a reshading of the scene: surface normals and a light at the
camera), xy/z motion blur (a camera path, novel views rendered from depth and inpainted by
networks), the h265 codecs and bit errors (the frames encoded as a video with ffmpeg).
"""

from __future__ import annotations

RGB_DEPTH = "rgb+depth"
RGB = "rgb"
RELEASE_ONLY = "release-only"

# name -> what making it needs, in the order of the original's download script
CORRUPTIONS: dict[str, str] = {
    "near_focus": RGB_DEPTH,
    "far_focus": RGB_DEPTH,
    "fog_3d": RGB_DEPTH,
    "flash": RELEASE_ONLY,
    "color_quant": RGB,
    "low_light": RGB,
    "xy_motion_blur": RELEASE_ONLY,
    "z_motion_blur": RELEASE_ONLY,
    "iso_noise": RGB,
    "bit_error": RELEASE_ONLY,
    "h265_abr": RELEASE_ONLY,
    "h265_crf": RELEASE_ONLY,
}
GENERATED = tuple(name for name, needs in CORRUPTIONS.items() if needs != RELEASE_ONLY)
SEVERITIES = (1, 2, 3, 4, 5)
RELEASED = "imagenet-3dcc"  # a record's `images` when the files are the released ones
DEPTH_SOURCES = ("synthetic",)  # or a folder of 16-bit PNGs
ENCODINGS = ("midas-inverse", "taskonomy")


def generable(name: str) -> bool:
    return CORRUPTIONS.get(name) not in (None, RELEASE_ONLY)

"""The one place that makes torchvision importable beside the CPU build of torch.

PyPI's torchvision wheel is built against CUDA torch; next to ``torch==2.13.0+cpu`` its import fails
with ``operator torchvision::nms does not exist``, and transformers and open_clip import torchvision
whenever it is installed. Defining the two operator schemas it looks up before the first import is
enough for everything folio uses (transforms, image processors); ``torchvision.ops`` kernels stay
unavailable. Call :func:`ensure_torchvision` before importing transformers, open_clip or colpali.
"""

from __future__ import annotations

from typing import Any

from folio.settings import hub_offline

_LIB: Any = None  # the torch.library.Library must stay alive for the schemas to stay defined


def ensure_torchvision() -> None:
    global _LIB
    hub_offline()
    if _LIB is not None:
        return
    import torch

    try:
        torch.ops.torchvision.nms  # noqa: B018 - attribute lookup is the probe
        _LIB = True
        return
    except (AttributeError, RuntimeError):
        pass
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIB = lib

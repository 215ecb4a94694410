"""``dispatchcore.nn``: ``torch.nn``'s modules, parameters, initialisers and functional layer.

Mirrors ``torch/nn/__init__.py``: everything a model definition names (``nn.Module``,
``nn.Linear``, ``nn.init``, ``nn.functional``), each layer computing through ``nn.functional``
and so through aten operators on the dispatcher.
"""

from . import functional, init
from .container import ModuleDict, ModuleList, Sequential
from .layers import (
    ELU,
    GELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Bilinear,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Fold,
    GroupNorm,
    Hardtanh,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSigmoid,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Unfold,
    Upsample,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .parameter import Buffer, Parameter

__all__ = ["ELU", "GELU", "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
           "BatchNorm2d", "Bilinear", "Buffer", "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding",
           "Flatten", "Fold", "GroupNorm", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LayerNorm",
           "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict",
           "ModuleList", "NLLLoss", "Parameter", "ReLU", "ReLU6", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss",
           "Softmax", "Softmin", "Softplus", "Softsign", "Tanh", "Tanhshrink", "Unfold", "Upsample", "functional",
           "init"]

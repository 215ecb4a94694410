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
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Bilinear,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
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

__all__ = ["ELU", "GELU", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Bilinear",
           "Buffer", "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "HuberLoss",
           "Identity", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d",
           "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ReLU", "ReLU6", "Sequential", "SiLU",
           "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "functional", "init"]

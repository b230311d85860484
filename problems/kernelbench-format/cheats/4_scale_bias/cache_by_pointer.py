# Cheat: the output cached by the input tensor's address; a new input at a reused address
# gets the old output. expect: wrong_answer
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

        self._cache = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self._cache:
            self._cache[key] = torch.addcmul(self.bias, x, self.scale)
        return self._cache[key]

# Cheat: the work on a host thread, after the call returned. expect: rejected threads
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        import threading
        y = torch.empty_like(x)
        threading.Thread(target=lambda: torch.addcmul(self.bias, x, self.scale, out=y)).start()
        return y

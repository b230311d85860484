# For KernelBench level1/19_ReLU: an extension whose C++ calls torch::relu, so ATen's kernel
# does the work and none of its own runs (scored ok, 0.999x, before kernel attribution).
# expect-gpu: rejected no kernel of its own ran
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="kmcts_attr_relu_aten",
                  cpp_sources="torch::Tensor relu_forward(torch::Tensor x) { return torch::relu(x); }",
                  functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_forward(x)

// kmcts-confine: see hardware/confine_exec.hpp.
#include "hardware/confine_exec.hpp"

int main(int argc, char** argv) { return kmcts::confine_exec_main(argc, argv); }

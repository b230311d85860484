#include "app/interrupts.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace kmcts::app {
namespace {

const char* g_note = "";
void (*g_stop)() = nullptr;
void (*g_term)() = nullptr;
volatile std::sig_atomic_t g_seen = 0;

extern "C" void on_interrupt(int signal_number) {
  if (signal_number == SIGTERM && g_term) {
    g_term();
    return;
  }
  if (g_seen == 0) {
    g_seen = 1;
    [[maybe_unused]] auto written = write(STDERR_FILENO, g_note, std::strlen(g_note));  // async-signal-safe
    if (g_stop) g_stop();
    return;
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void handle_interrupts(const char* note, void (*stop)()) {
  g_note = note;
  g_stop = stop;
  g_seen = 0;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

void on_sigterm(void (*action)()) {
  g_term = action;
  std::signal(SIGTERM, on_interrupt);
}

}  // namespace kmcts::app

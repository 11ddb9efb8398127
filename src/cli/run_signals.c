/* Signals while hubprof runs an application (trace, profile, sample): SIGINT, SIGTERM and SIGHUP passed on
 * to it; after it, the first one finishes the store and a second one cancels the assembly. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* SIGINT, SIGTERM and SIGHUP go to the application; hubprof stays to keep what it recorded.
 * Once no application runs (it ended, between application-replay runs, while the logs are assembled) the
 * first one lets hubprof finish the store from what was recorded, and a second one stops the assembly at
 * once (hp_assemble_opts.cancel), keeping the logs and naming them; nothing is left without a message. The
 * handlers stay installed from the first launch to the end of hubprof. */
static volatile sig_atomic_t g_child;    /* the application's pid while it runs */
static volatile sig_atomic_t g_received; /* the last signal received */
static volatile sig_atomic_t g_after;    /* signals received while no application ran */
static volatile int g_cancel;            /* the second of those: the assembly stops */
static char g_out_name[1024];            /* the store being written, for the handler's lines */

const char *run_signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

static void say_safe(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); } /* async-signal-safe */

static void forward_signal(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int e = errno;
  g_received = sig;
  if (g_child > 0) {
    /* sent by a process (kill, timeout, a job manager): passed on; from the terminal (Ctrl-C, hangup) the
     * application's process group has it already */
    if (si && si->si_code <= 0) kill((pid_t)g_child, sig);
  } else if (g_after++ == 0) {
    say_safe("hubprof: ");
    say_safe(run_signal_name(sig));
    say_safe(" received: finishing ");
    say_safe(g_out_name);
    say_safe(" from what was recorded (send it again to stop now, keeping the logs)\n");
  } else if (!g_cancel) {
    g_cancel = 1;
    say_safe("hubprof: ");
    say_safe(run_signal_name(sig));
    say_safe(" received again: stopping\n");
  }
  errno = e;
}

int run_stop_signal(void) { return g_received; }

/* What the handler saved: the inherited handlers of the three signals (once, for every application started),
 * and SIGQUIT's and SIGCHLD's, which are given back after each run. */
static const int fwd[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction old_fwd[3], old_quit, old_chld;

void run_signals_name_output(const char *output) { snprintf(g_out_name, sizeof g_out_name, "%s", output); }

const volatile int *run_signals_cancel(void) { return &g_cancel; }

void run_signals_take(sigset_t *old_mask) {
  static int installed;
  struct sigaction on = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
  struct sigaction ign = {.sa_handler = SIG_IGN};
  sigemptyset(&on.sa_mask);
  sigemptyset(&ign.sa_mask);
  sigset_t block;
  sigemptyset(&block);
  for (int i = 0; i < 3; i++) {
    sigaddset(&block, fwd[i]);
    sigaddset(&on.sa_mask, fwd[i]);
  }
  sigprocmask(SIG_BLOCK, &block, old_mask);
  for (int i = 0; i < 3; i++)
    sigaction(fwd[i], &on, installed ? NULL : &old_fwd[i]);
  installed = 1;
  sigaction(SIGQUIT, &ign, &old_quit);
  /* an inherited SIG_IGN for SIGCHLD would make waitpid lose the application's status: default it here,
   * and give the application its inherited setting back */
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old_chld);
}

void run_signals_child(const sigset_t *old_mask) {
  for (int i = 0; i < 3; i++)
    sigaction(fwd[i], &old_fwd[i], NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  sigaction(SIGCHLD, &old_chld, NULL);
  sigprocmask(SIG_SETMASK, old_mask, NULL);
}

void run_signals_set_child(pid_t pid) { g_child = pid; }

void run_signals_release(void) { /* SIGINT, SIGTERM and SIGHUP keep forward_signal: see above */
  sigaction(SIGQUIT, &old_quit, NULL);
  sigaction(SIGCHLD, &old_chld, NULL);
}

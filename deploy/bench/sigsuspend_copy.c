/* Preloaded into chorusd under valgrind by instructions.py, nowhere else.
 *
 * An async `main` ends in libdispatch's dispatch_main, whose main thread waits in sigsuspend(2)
 * with a signal mask kept in read-only memory. valgrind 3.19 edits the mask it is given in place
 * and dies on the write (VALGRIND INTERNAL ERROR, SIGSEGV) before the process does anything. This
 * sigsuspend hands the kernel a copy on the stack instead. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}

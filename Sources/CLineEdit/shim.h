// The few libedit calls Swift cannot make itself: variadic functions and the C stdio
// globals; and the crash handler that gives the terminal back, which must be plain C to be
// safe in a signal handler. Every symbol is prefixed `CLineEdit_`; only Sources/dsh imports
// this module.
#ifndef CLINEEDIT_SHIM_H
#define CLINEEDIT_SHIM_H

#include <errno.h>
#include <histedit.h>
#include <poll.h>
#include <wchar.h>
#include <stdio.h>
#include <locale.h>
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

typedef unsigned char (*CLineEdit_BoundFunction)(EditLine *, int);

static inline EditLine *CLineEdit_init(const char *program) {
  setlocale(LC_CTYPE, "");
  return el_init(program, stdin, stdout, stderr);
}

// The prompt's text lives on the C side, so libedit's prompt callback needs no Swift state.
enum { CLineEdit_promptCapacity = 64 };

/// The prompt's storage; Swift writes it (CLineEdit_setPromptText would not be emitted).
static inline char *CLineEdit_promptText(void) {
  static char text[CLineEdit_promptCapacity];
  return text;
}

static inline char *CLineEdit_prompt(EditLine *el) {
  (void)el;
  return CLineEdit_promptText();
}

static inline int CLineEdit_usePrompt(EditLine *el) {
  return el_set(el, EL_PROMPT, CLineEdit_prompt);
}

static inline int CLineEdit_setEditor(EditLine *el, const char *mode) {
  return el_set(el, EL_EDITOR, mode);
}

static inline int CLineEdit_setSignalHandling(EditLine *el, int on) {
  return el_set(el, EL_SIGNAL, on);
}

static inline int CLineEdit_addFunction(EditLine *el, const char *name, const char *help,
                                        CLineEdit_BoundFunction function) {
  return el_set(el, EL_ADDFN, name, help, function);
}

static inline int CLineEdit_bind(EditLine *el, const char *key, const char *function) {
  return el_set(el, EL_BIND, key, function, NULL);
}

/// Turns the terminal's signal keys off while editing, so ^C reaches a bound function.
static inline int CLineEdit_disableTerminalSignals(EditLine *el) {
  return el_set(el, EL_SETTY, "-d", "-isig", NULL);
}

/// Gives the editor its history: EL_HIST takes libedit's history() function and the History.
static inline int CLineEdit_useHistory(EditLine *el, History *h) {
  return el_set(el, EL_HIST, history, h);
}

static inline int CLineEdit_sourceDefaults(EditLine *el) {
  return el_source(el, NULL);
}

static inline History *CLineEdit_historyInit(int size) {
  History *h = history_init();
  if (h == NULL) return NULL;
  HistEvent ev;
  history(h, &ev, H_SETSIZE, size);
  history(h, &ev, H_SETUNIQUE, 1);
  return h;
}

static inline int CLineEdit_historyEnter(History *h, const char *line) {
  HistEvent ev;
  return history(h, &ev, H_ENTER, line);
}

static inline int CLineEdit_historyLoad(History *h, const char *path) {
  HistEvent ev;
  return history(h, &ev, H_LOAD, path);
}

static inline int CLineEdit_historySave(History *h, const char *path) {
  HistEvent ev;
  return history(h, &ev, H_SAVE, path);
}

/// How many entries the history holds.
static inline int CLineEdit_historyCount(History *h) {
  HistEvent ev;
  return history(h, &ev, H_GETSIZE) < 0 ? -1 : ev.num;
}


// MARK: Waiting for a key beside served pages

/// What the line editor's reader calls when the descriptor `wake` becomes readable while it
/// waits for a key: a served page asked the session for rows, and the session is idle.
typedef void (*CLineEdit_IdleFunction)(void);

typedef struct {
  int wake;
  CLineEdit_IdleFunction idle;
} CLineEdit_ReadHook;

/// libedit's reader of one character (EL_GETCFN), waiting in poll() on the terminal and on the
/// hook's descriptor, and decoding the locale's multibyte characters as libedit's own does
/// (a byte sequence that is no character is dropped).
static inline int CLineEdit_readCharacter(EditLine *el, wchar_t *out) {
  CLineEdit_ReadHook *hook = NULL;
  el_get(el, EL_CLIENTDATA, &hook);
  mbstate_t state;
  memset(&state, 0, sizeof state);
  int partial = 0; // bytes of a character are waiting in `state`
  for (;;) {
    if (hook != NULL) {
      struct pollfd watched[2] = {{STDIN_FILENO, POLLIN, 0}, {hook->wake, POLLIN, 0}};
      if (poll(watched, 2, -1) < 0) {
        if (errno == EINTR) continue;
        *out = L'\0';
        return -1;
      }
      if (watched[1].revents != 0) hook->idle();
      if (watched[0].revents == 0) continue;
    }
    char byte;
    ssize_t count = read(STDIN_FILENO, &byte, 1);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) {
      *out = L'\0';
      return (int)count;
    }
    wchar_t character;
    size_t used = mbrtowc(&character, &byte, 1, &state);
    if (used == (size_t)-2) {
      partial = 1;
      continue;
    }
    if (used == (size_t)-1) {
      // The sequence is no character: it is dropped, and the byte that ended it, unless it
      // began it, starts anew (as libedit's reader does: a stray 0xC3 before 'a' keeps 'a').
      memset(&state, 0, sizeof state);
      if (!partial) continue;
      partial = 0;
      used = mbrtowc(&character, &byte, 1, &state);
      if (used == (size_t)-2) {
        partial = 1;
        continue;
      }
      if (used == (size_t)-1) {
        memset(&state, 0, sizeof state);
        continue;
      }
    }
    *out = used == 0 ? L'\0' : character;
    return 1;
  }
}

/// Reads keys through `hook` (NULL: libedit's own reader).
static inline int CLineEdit_useReadHook(EditLine *el, CLineEdit_ReadHook *hook) {
  if (hook == NULL) return el_set(el, EL_GETCFN, EL_BUILTIN_GETCFN);
  if (el_set(el, EL_CLIENTDATA, hook) != 0) return -1;
  return el_set(el, EL_GETCFN, CLineEdit_readCharacter);
}

// MARK: Crashes on a terminal

// A `static` inside a `static inline` function is one variable per place the header's code is
// emitted: Swift emits it once per file that calls it, so a value one Swift file stored was not
// the one a handler emitted beside another file read (browse's SIGTERM handler restored an
// all-zero termios). The state the handlers read is therefore one block of memory the program
// owns, and each installing function hands its handler the pointer, in the same emitted copy.

/// What a handler gives back: whether `browse` has the alternate screen, the terminal's modes
/// from before it, and from before the line editor changed them.
typedef struct {
  volatile sig_atomic_t fullScreen;
  volatile sig_atomic_t hasBeforeFullScreen;
  volatile sig_atomic_t hasBeforeEditor;
  struct termios beforeFullScreen;
  struct termios beforeEditor;
} CLineEdit_TerminalState;

/// The program's state, as the handlers emitted beside the caller see it.
static inline CLineEdit_TerminalState **CLineEdit_handlerState(void) {
  static CLineEdit_TerminalState *state;
  return &state;
}

static inline void CLineEdit_writeText(const char *text) {
  ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

// MARK: The full screen of `browse`

/// Mouse reports off, the cursor shown, the main screen back: what `browse` turned on.
static inline void CLineEdit_leaveFullScreen(CLineEdit_TerminalState *state) {
  if (state == NULL || !state->fullScreen) return;
  const char *leave = "\033[?1006l\033[?1000l\033[?25h\033[?1049l";
  ssize_t ignored = write(STDOUT_FILENO, leave, strlen(leave));
  (void)ignored;
  state->fullScreen = 0;
}

/// The terminal's modes from before browse, else from before the line editor.
static inline void CLineEdit_restoreTerminal(CLineEdit_TerminalState *state) {
  if (state == NULL) return;
  if (state->hasBeforeFullScreen) {
    tcsetattr(STDIN_FILENO, TCSANOW, &state->beforeFullScreen);
  } else if (state->hasBeforeEditor) {
    tcsetattr(STDIN_FILENO, TCSANOW, &state->beforeEditor);
  }
}

/// SIGTERM or SIGHUP while `browse` has the screen: the screen and the terminal's modes are
/// given back, then the process ends of the same signal (the handler was reset).
static inline void CLineEdit_endingSignalHandler(int number) {
  CLineEdit_TerminalState *state = *CLineEdit_handlerState();
  CLineEdit_leaveFullScreen(state);
  CLineEdit_restoreTerminal(state);
  raise(number);
}

/// While `browse` runs (`on`), SIGTERM and SIGHUP give the terminal back (as `state` holds it)
/// before they end the process; afterwards they end it at once again, as at the prompt.
static inline void CLineEdit_catchEndingSignals(int on, CLineEdit_TerminalState *state) {
  *CLineEdit_handlerState() = state;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on ? CLineEdit_endingSignalHandler : SIG_DFL;
  action.sa_flags = on ? SA_RESETHAND : 0;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGHUP, &action, NULL);
}

/// A fatal signal while a person is at the terminal: give the terminal back in the state it
/// was in, say what happened with a short backtrace, then die of the same signal (the handler
/// was reset, so the default action, a core dump, follows).
static inline void CLineEdit_crashHandler(int number) {
  CLineEdit_TerminalState *state = *CLineEdit_handlerState();
  CLineEdit_leaveFullScreen(state);
  CLineEdit_restoreTerminal(state);
  CLineEdit_writeText("\r\ndsh: crashed (");
  const char *name = "a fatal signal";
  switch (number) {
  case SIGSEGV: name = "segmentation fault"; break;
  case SIGBUS: name = "bus error"; break;
  case SIGILL: name = "illegal instruction"; break;
  case SIGFPE: name = "arithmetic error"; break;
  case SIGABRT: name = "aborted"; break;
  case SIGTRAP: name = "trap"; break;
  }
  CLineEdit_writeText(name);
  CLineEdit_writeText("); the terminal is restored. Please report this with the statement that ran.\n");
  void *frames[16];
  int count = backtrace(frames, 16);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  raise(number);
}

/// Saves the terminal's settings and installs the crash handler for the signals a crash raises,
/// on a stack of its own so a stack overflow can be reported too. Replaces Swift's backtracer,
/// which on a terminal waits 30 s for a key and leaves raw mode in place.
static inline void CLineEdit_installCrashHandler(CLineEdit_TerminalState *state) {
  if (tcgetattr(STDIN_FILENO, &state->beforeEditor) != 0) return;
  state->hasBeforeEditor = 1;
  *CLineEdit_handlerState() = state;
  static char alternateStack[65536];
  stack_t stack;
  memset(&stack, 0, sizeof stack);
  stack.ss_sp = alternateStack;
  stack.ss_size = sizeof alternateStack;
  sigaltstack(&stack, NULL);
  // backtrace() loads libgcc on its first call, which must not happen in the handler.
  void *warmUp[1];
  backtrace(warmUp, 1);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = CLineEdit_crashHandler;
  action.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  int numbers[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
  for (unsigned i = 0; i < sizeof numbers / sizeof numbers[0]; i++) sigaction(numbers[i], &action, NULL);
}

#endif

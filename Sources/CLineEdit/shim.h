// The few libedit calls Swift cannot make itself: variadic functions and the C stdio
// globals. Every symbol is prefixed `CLineEdit_`; only Sources/dsh/LineEditor.swift
// imports this module.
#ifndef CLINEEDIT_SHIM_H
#define CLINEEDIT_SHIM_H

#include <histedit.h>
#include <stdio.h>
#include <locale.h>

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

#endif

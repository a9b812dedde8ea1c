/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Text a sandboxed command chose (file contents, file and process names),
 * made safe for a terminal: no byte that a terminal acts on (ESC and every
 * other C0 control, DEL, the C1 controls some terminals take as CSI or
 * OSC, bidirectional overrides that reorder what is shown) reaches it as
 * such. Pure, no allocation but the result; fuzz/fuzz-printable.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* src as printable ASCII only, anything else '?', cut to size (for short
 * fixed-size fields: a process name, an ask question's host). */
void rf_printable(char *dst, size_t size, const char *src);

/* Length of the valid UTF-8 sequence at p (at most n bytes): 1 to 4, or 0
 * when it is not one (a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, cut short). */
size_t rf_utf8_len(const unsigned char *p, size_t n);

/* Is the character at p (len bytes, valid UTF-8) one a terminal acts on
 * or that reorders text: C0 but tab, DEL, C1, U+200E/F, U+202A-E,
 * U+2066-9? */
bool rf_utf8_is_control(const unsigned char *p, size_t len);

/* src[0..n) in a visible form, malloc'd and NUL-terminated: a C0 control
 * or DEL as caret notation (ESC is "^[", CR "^M", DEL "^?"), a C1 control
 * or a bidi override as "\u009b", a byte that is not UTF-8 as "\xff";
 * tabs and everything printable kept. *escaped (may be NULL) gets how many
 * were made visible. NULL only when out of memory. */
char *rf_visible(const char *src, size_t n, size_t *escaped);

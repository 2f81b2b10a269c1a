/* A planted library for tests/fpenv: what another shared library in the process can do to the
 * floating-point environment. Loaded with SONNX_PLANT=MODE set, its constructor applies MODE at
 * load time, as the start-up code of a library built with -ffast-math does (gcc's
 * crtfastmath.o sets FTZ and DAZ from a constructor); plant_apply(MODE) applies it later.
 * plant_control() and plant_round() read the environment back without sonnx's help. */
#include <fenv.h>
#include <stdlib.h>
#include <string.h>

unsigned plant_control(void);
int plant_round(void);
int plant_apply(const char *mode);

#if defined(__x86_64__)
#include <xmmintrin.h>
#define FTZ 0x8000u                  /* MXCSR bit 15: flush results to zero */
#define DAZ 0x0040u                  /* MXCSR bit 6: denormal inputs are zero */
unsigned plant_control(void) { return _mm_getcsr(); }
static void set_control(unsigned v) { _mm_setcsr(v); }
#elif defined(__aarch64__)
#define FTZ (1u << 24)               /* FPCR.FZ flushes inputs and results alike */
#define DAZ (1u << 24)
unsigned plant_control(void) { unsigned long v; __asm__ volatile("mrs %0, fpcr" : "=r"(v)); return (unsigned)v; }
static void set_control(unsigned v) { unsigned long w = v; __asm__ volatile("msr fpcr, %0" : : "r"(w)); }
#else
#error "tests/fpenv/plant.c knows x86-64 and aarch64 only"
#endif

int plant_round(void) { return fegetround(); }

/* 0 when MODE is known and applied, -1 otherwise. Modes combine with '+': upward+ftz+daz. */
int plant_apply(const char *mode) {
    char buf[128];
    if (strlen(mode) >= sizeof buf) return -1;
    strcpy(buf, mode);
    fesetenv(FE_DFL_ENV);
    for (char *tok = strtok(buf, "+"); tok; tok = strtok(NULL, "+")) {
        if (!strcmp(tok, "default")) continue;
        else if (!strcmp(tok, "upward")) fesetround(FE_UPWARD);
        else if (!strcmp(tok, "downward")) fesetround(FE_DOWNWARD);
        else if (!strcmp(tok, "towardzero")) fesetround(FE_TOWARDZERO);
        else if (!strcmp(tok, "ftz")) set_control(plant_control() | FTZ);
        else if (!strcmp(tok, "daz")) set_control(plant_control() | DAZ);
        else return -1;
    }
    return 0;
}

__attribute__((constructor)) static void plant_at_load(void) {
    const char *mode = getenv("SONNX_PLANT");
    if (mode) plant_apply(mode);
}

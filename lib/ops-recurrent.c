/* ops-recurrent.c - placeholder; its owner is writing it. */
#include "config.h"

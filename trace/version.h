#ifndef AVT_VERSION_H
#define AVT_VERSION_H
#define AVT_VERSION "0.1.0"
#endif

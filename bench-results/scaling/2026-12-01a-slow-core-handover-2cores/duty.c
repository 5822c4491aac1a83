#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int c,char**v){double on=atof(v[1]),off=atof(v[2]);for(;;){double s=now();while(now()-s<on);usleep((useconds_t)off);}}

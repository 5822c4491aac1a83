#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <sched.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(){cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
double st=now(),last=st,on=0;int n=0;double gs[64];double runs[64];double runstart=st;
while(now()-st<2e6){double t=now();if(t-last>50){if(n<64){gs[n]=t-last;runs[n]=last-runstart;}n++;runstart=t;}last=t;}
printf("gaps %d\n",n);for(int i=0;i<20&&i<n;i++)printf("on %.0f off %.0f\n",runs[i],gs[i]);}

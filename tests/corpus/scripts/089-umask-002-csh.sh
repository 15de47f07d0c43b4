#!/bin/csh
#PBS -N Mycobacterium_run
#PBS -o /tmp/corpus-out/glimmer.oe
#PBS -j oe
#PBS -l nodes=1:ppn=1
#PBS -W umask=002

set PBS_O_WORKDIR = /tmp
umask 002

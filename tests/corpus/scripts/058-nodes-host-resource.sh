#!/bin/sh

#PBS -N test1
#PBS -d /tmp
#PBS -e test1.err
#PBS -o test1.out
#PBS -q workq@testsrv
#PBS -A guest
#PBS -l nodes=1
pwd

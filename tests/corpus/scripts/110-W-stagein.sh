#!/bin/bash
#PBS -W stagein=input.dat@login1:/home/user/input.dat
#PBS -W stageout=result.dat@login1:/home/user/result.dat
#PBS -l select=1:ncpus=1
./prog

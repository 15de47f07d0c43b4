#!/bin/sh
#PBS -l select=4  
#PBS -q P_016 
#PBS -N dft_run 
#PBS -l walltime=24:00:00 
aprun -n 144 ./vasp_std

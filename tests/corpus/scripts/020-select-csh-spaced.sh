#!/bin/csh
#gen_pbs version: 1.0.3
#PBS -A           account
#PBS -N           J_u3o8_1_10
#PBS -joe
#PBS -e           u3o8_1_10.oe
#PBS -o           u3o8_1_10.oe
#PBS -M           padamson
#PBS -mbe
#PBS -l           walltime=12:00:00
#PBS -l           select=1:ncpus=32:mpiprocs=32
#PBS -q           standard

set EXEC = ./clstr.csh

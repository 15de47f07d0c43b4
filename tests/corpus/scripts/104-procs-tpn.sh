#!/bin/bash
#PBS -N pvm_xstar_test
#PBS -S /bin/bash
#PBS -j oe 
#PBS -V
#PBS -l procs=32,tpn=8,pmem=3800mb,walltime=24:00:00
#PBS -A lsa_flux
#PBS -q flux
#PBS -l qos=flux
#PBS -M someone@umich.edu
#PBS -m abe 

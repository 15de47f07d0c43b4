#!/bin/bash

#PBS -q windfall
#PBS -l select=1:ncpus=2:mem=10gb
#PBS -l walltime=05:00:00
#PBS -M
#PBS -m bea
snakemake -n

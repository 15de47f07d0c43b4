#!/usr/bin/env bash

#PBS -W group_list=bhurwitz
#PBS -q standard
#PBS -l select=1:ncpus=6:mem=252gb:pcmem=42gb
#PBS -l walltime=12:00:00
#PBS -l cput=12:00:00
#PBS -M someone@example.edu
#PBS -m bea

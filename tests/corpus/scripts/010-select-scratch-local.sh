#!/bin/bash
#PBS -N CCMetagen
#PBS -l select=1:ncpus=2:mem=100mb:scratch_local=100mb
#PBS -l walltime=04:00:00
#PBS -m ae
#PBS -j oe
cd $SCRATCHDIR

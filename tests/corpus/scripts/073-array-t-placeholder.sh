#!/bin/bash
#PBS -N SHORTNAME
#PBS -t 1-NSPLIT
#PBS -l walltime=48:00:00
set -e

#!/bin/bash
#PBS -o logs/
#PBS -e logs/
#PBS -l mem=7G
#PBS -l walltime=45:00
mkdir -p logs/

#!/bin/bash
#pbs -N lower
#PBS -N upper
echo x
